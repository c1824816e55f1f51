from django import forms


class RetrievalTestForm(forms.Form):
    message = forms.CharField(max_length=4000, widget=forms.Textarea(attrs={"rows": 3, "cols": 80}))
    focus = forms.CharField(required=False, max_length=200, help_text="UI semantic ID in focus, e.g. quote.pricing")
    parents = forms.CharField(required=False, max_length=1000, help_text="Parent semantic IDs, comma-separated")
    page = forms.CharField(required=False, max_length=200, help_text="Page semantic ID")
    budget_tokens = forms.IntegerField(required=False, min_value=50, max_value=32000)
    max_full = forms.IntegerField(required=False, min_value=0, max_value=20)

    def clean_parents(self):
        raw = self.cleaned_data.get("parents") or ""
        return [p.strip() for p in raw.split(",") if p.strip()]
