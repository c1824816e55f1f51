"""The curators' admin for the knowledge catalog.

Every write goes through knowledge.services (never a plain model save), so an
admin edit behaves exactly like an import or an API write: validated, one
revision per change, the catalog version bumped for every process. The
"curators" group edits; other staff read.
"""


from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.db.models import OuterRef, Subquery
from django.http import Http404, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST

from common.exceptions import ApplicationError
from common.text import retrieval_embeddings
from knowledge.catalog import package_wikilinks_unresolved
from knowledge.embeddings import revision_text
from knowledge.exceptions import RevisionNotFoundError
from knowledge.forms import PackageAdminForm, RetrievalTestForm
from knowledge.markdown import extract_wikilinks, render_markdown
from knowledge.feedback import feedback_rows_deleted, half_life_seconds
from knowledge.models import (
    CatalogState,
    FetchFeedback,
    Package,
    PackageOrigin,
    PackageRevision,
    RevisionEmbedding,
    RevisionSearchTerms,
    OutOfScopeSet,
    SynonymSet,
)
from knowledge.search_terms import clean_questions, clean_terms, proposed_questions, search_terms_accept
from knowledge.permissions import is_curator
from knowledge.retrieval.dense import embedded_text, text_digest
from knowledge.revision_diff import revision_diff
from knowledge.routing_service import route_context
from knowledge.selectors import package_revision_get, package_revisions
from knowledge.services import (
    package_create,
    package_reset_to_bundled,
    package_revert,
    package_set_active,
    package_update,
    out_of_scope_questions_clean,
    out_of_scope_set_save,
    out_of_scope_total_check,
    synonym_set_save,
    synonym_terms_clean,
)

REVISIONS_PER_PAGE = 50


def _is_curator(request) -> bool:
    # The admin asks for permissions many times per page; one group query per request.
    if not hasattr(request, "_knowledge_is_curator"):
        request._knowledge_is_curator = is_curator(request.user)
    return request._knowledge_is_curator


def _is_staff(request) -> bool:
    return request.user.is_active and request.user.is_staff


def _error_lines(exc: Exception) -> list[str]:
    if isinstance(exc, ValidationError):
        if hasattr(exc, "error_dict"):
            return [f"{field}: {msg}" for field, msgs in exc.message_dict.items() for msg in msgs]
        return list(exc.messages)
    return [getattr(exc, "message", None) or str(exc)]


class StaffReadCuratorWriteMixin:
    """Any staff member reads; only curators add and change; nobody deletes (deactivate instead)."""

    def has_module_permission(self, request):
        return _is_staff(request)

    def has_view_permission(self, request, obj=None):
        return _is_staff(request)

    def has_add_permission(self, request):
        return _is_curator(request)

    def has_change_permission(self, request, obj=None):
        return _is_curator(request)

    def has_delete_permission(self, request, obj=None):
        # Deleting would drop the revision history; a bundled package would come back on
        # the next sync anyway. Deactivation hides a package and keeps who did what.
        return False


class StaffReadOnlyMixin(StaffReadCuratorWriteMixin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


# --- packages ----------------------------------------------------------------------------


@admin.register(Package)
class PackageAdmin(StaffReadCuratorWriteMixin, admin.ModelAdmin):
    form = PackageAdminForm
    list_display = [
        "package_id",
        "title",
        "kind",
        "origin",
        "is_active",
        "is_overridden",
        "revision",
        "last_change",
    ]
    list_display_links = ["package_id", "title"]
    list_filter = ["kind", "origin", "is_active", "is_overridden", "strict"]
    search_fields = ["package_id", "title", "summary", "aliases", "keywords", "body"]
    ordering = ["position", "package_id"]
    list_per_page = 100
    actions = ["activate_packages", "deactivate_packages", "reset_packages_to_bundled"]
    state_fields = [
        "origin",
        "is_active",
        "is_overridden",
        "revision_number",
        "last_change",
        "bundled_path",
        "content_hash",
        "created_at",
        "updated_at",
    ]

    # -- list and form layout

    def get_queryset(self, request):
        # "Who changed what and when" on the list, without a query per row.
        latest = PackageRevision.objects.filter(package=OuterRef("pk")).order_by("-number")
        return (
            super()
            .get_queryset(request)
            .annotate(
                last_author=Subquery(latest.values("author__username")[:1]),
                last_changed_at=Subquery(latest.values("created_at")[:1]),
            )
        )

    @admin.display(description="Rev.", ordering="revision_number")
    def revision(self, obj):
        return obj.revision_number

    @admin.display(description="Last change", ordering="last_changed_at")
    def last_change(self, obj):
        when = getattr(obj, "last_changed_at", None)
        if when is None:
            return "—"
        who = getattr(obj, "last_author", None) or "system"
        return f"{when:%Y-%m-%d %H:%M} by {who}"

    def get_fieldsets(self, request, obj=None):
        identity = ["package_id", "title", "summary", "kind", "strict"]
        routing = ["aliases", "keywords", "semantic_ids", "source"]
        if obj is None:
            return [
                (None, {"fields": identity}),
                ("Routing", {"fields": routing}),
                ("Body (Markdown; link other packages as [[PACKAGE_ID]])", {"fields": ["body", "body_preview"]}),
                ("Revision", {"fields": ["revision_note"]}),
            ]
        fieldsets = [
            (None, {"fields": identity}),
            ("Routing", {"fields": routing}),
            ("Body (Markdown; link other packages as [[PACKAGE_ID]])", {"fields": ["body", "body_preview"]}),
        ]
        if self.has_change_permission(request, obj):
            fieldsets.append(("Revision", {"fields": ["revision_note"]}))
        fieldsets.append(("Catalog state", {"fields": self.state_fields}))
        return fieldsets

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return ["body_preview"]
        return ["package_id", "body_preview", *self.state_fields]

    @admin.display(description="Preview")
    def body_preview(self, obj):
        # `obj` is the form's instance: after "Preview", it holds the posted, unsaved body.
        if obj is None or not (obj.body or "").strip():
            return "—"
        unresolved = package_wikilinks_unresolved(body=obj.body)
        missing = {target for target, _ in unresolved}
        known = set(extract_wikilinks(obj.body)) - missing
        html = render_markdown(obj.body, known_ids=known)  # nh3-sanitized
        warning = ""
        if unresolved:
            warning = format_html(
                '<p class="package-preview-warning">Links to packages the catalog cannot resolve: {}</p>',
                format_html_join(", ", "<code>[[{}]]</code> ({})", unresolved),
            )
        return format_html('{}<div class="package-preview">{}</div>', warning, mark_safe(html))

    # -- saving through the services

    def save_model(self, request, obj, form, change):
        data = form.package_data()
        note = (form.cleaned_data.get("revision_note") or "").strip()
        if change:
            before = Package.objects.values_list("revision_number", flat=True).get(pk=obj.pk)
            package = package_update(acting_user=request.user, package=obj, data=data, note=note)
            if package.revision_number == before:
                self.message_user(request, "No content changed: no new revision was written.", messages.INFO)
        else:
            package = package_create(
                acting_user=request.user,
                package_id=form.package_id_value(),
                data=data,
                note=note or "Created in the admin",
            )
            obj.pk = package.pk
            obj._state.adding = False
        obj.refresh_from_db()
        self._warn_unresolved_links(request, obj)

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except ValidationError as exc:
            # The form ran the services' validation already, so only a concurrent curator's
            # save gets here (the admin's transaction has rolled back): report, never a 500.
            self.message_user(request, f"Not saved: {'; '.join(_error_lines(exc))}", messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())

    def _warn_unresolved_links(self, request, package: Package) -> None:
        unresolved = package_wikilinks_unresolved(body=package.body)
        if unresolved:
            listed = ", ".join(f"[[{target}]] ({why})" for target, why in unresolved)
            self.message_user(
                request,
                f"{package.package_id} links to packages the catalog cannot resolve: {listed}.",
                messages.WARNING,
            )

    # -- actions: each package reported, refusals included, nothing raised

    def _report(self, request, verb: str, done: list[str], unchanged: list[str], failed: list[str]) -> None:
        if done:
            self.message_user(request, f"{verb}: {', '.join(done)}.", messages.SUCCESS)
        if unchanged:
            self.message_user(request, f"Already so, unchanged: {', '.join(unchanged)}.", messages.INFO)
        for line in failed:
            self.message_user(request, line, messages.ERROR)

    def _set_active(self, request, queryset, active: bool) -> None:
        done, unchanged, failed = [], [], []
        for package in queryset:
            if package.is_active == active:
                unchanged.append(package.package_id)
                continue
            try:
                package_set_active(acting_user=request.user, package=package, active=active)
            except (ValidationError, ApplicationError) as exc:
                failed.append(f"{package.package_id}: {'; '.join(_error_lines(exc))}")
                continue
            done.append(package.package_id)
        self._report(request, "Activated" if active else "Deactivated", done, unchanged, failed)

    @admin.action(description="Activate selected packages", permissions=["change"])
    def activate_packages(self, request, queryset):
        self._set_active(request, queryset, True)

    @admin.action(description="Deactivate selected packages (hide them from the catalog)", permissions=["change"])
    def deactivate_packages(self, request, queryset):
        self._set_active(request, queryset, False)

    @admin.action(description="Reset selected packages to their bundled file", permissions=["change"])
    def reset_packages_to_bundled(self, request, queryset):
        done, unchanged, failed = [], [], []
        for package in queryset:
            if package.origin != PackageOrigin.BUNDLED:
                failed.append(f"{package.package_id}: created in the admin, it has no bundled file to reset to.")
                continue
            before = package.revision_number
            try:
                after = package_reset_to_bundled(acting_user=request.user, package=package)
            except (ValidationError, ApplicationError) as exc:
                failed.append(f"{package.package_id}: {'; '.join(_error_lines(exc))}")
                continue
            (done if after.revision_number != before else unchanged).append(package.package_id)
        self._report(request, "Reset to the bundled file", done, unchanged, failed)

    # -- revisions: history, compare, revert

    def get_urls(self):
        info = self.opts.app_label, self.opts.model_name
        wrap = self.admin_site.admin_view
        return [
            path("retrieval-test/", wrap(self.retrieval_test_view), name="%s_%s_retrieval_test" % info),
            path("<path:object_id>/revisions/", wrap(self.revisions_view), name="%s_%s_revisions" % info),
            path(
                "<path:object_id>/revisions/compare/",
                wrap(self.revision_compare_view),
                name="%s_%s_revision_compare" % info,
            ),
            path(
                "<path:object_id>/revisions/<int:number>/revert/",
                wrap(require_POST(self.revision_revert_view)),
                name="%s_%s_revision_revert" % info,
            ),
            *super().get_urls(),
        ]

    def retrieval_test_view(self, request):
        """A curator types a question (and a semantic ID) and sees what would be delivered, and why."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        form = RetrievalTestForm(request.GET or None)
        result = None
        if form.is_valid():
            data = form.cleaned_data
            result = route_context(
                message=data["message"],
                semantic_context={
                    "focus": data.get("focus") or None,
                    "parents": data.get("parents") or [],
                    "page": data.get("page") or None,
                },
                budget_tokens=data.get("budget_tokens"),
                max_full=data.get("max_full"),
                use_cache=False,
            )
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "Retrieval test",
            "form": form,
            "result": result,
        }
        return TemplateResponse(request, "admin/knowledge/package/retrieval_test.html", context)

    def _package_for(self, request, object_id) -> Package:
        package = self.get_object(request, unquote(object_id))
        if package is None:
            raise Http404("No such package.")
        if not self.has_view_permission(request, package):
            raise PermissionDenied
        return package

    def _url(self, name: str, *args) -> str:
        return reverse(f"{self.admin_site.name}:{self.opts.app_label}_{self.opts.model_name}_{name}", args=args)

    def _context(self, request, package: Package, title: str) -> dict:
        return {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "original": package,
            "title": title,
            "subtitle": package.title,
            "change_url": self._url("change", package.pk),
            "revisions_url": self._url("revisions", package.pk),
            "compare_url": self._url("revision_compare", package.pk),
            "can_revert": self.has_change_permission(request, package),
        }

    def revisions_view(self, request, object_id):
        package = self._package_for(request, object_id)
        page = Paginator(package_revisions(package=package), REVISIONS_PER_PAGE).get_page(request.GET.get("page"))
        rows = [(revision, self._url("revision_revert", package.pk, revision.number)) for revision in page.object_list]
        context = {
            **self._context(request, package, f"Revisions of {package.package_id}"),
            "page": page,
            "rows": rows,
            "latest_number": package.revision_number,
        }
        return TemplateResponse(request, "admin/knowledge/package/revisions.html", context)

    def revision_compare_view(self, request, object_id):
        package = self._package_for(request, object_id)
        latest = package.revision_number
        try:
            new_number = int(request.GET.get("b") or latest)
            old_number = int(request.GET.get("a") or max(new_number - 1, 1))
        except ValueError as exc:
            raise Http404("Revision numbers are whole numbers.") from exc
        old = package_revision_get(package=package, number=old_number)
        new = package_revision_get(package=package, number=new_number)
        if old is None or new is None:
            raise Http404("This package has no such revision.")
        diff = revision_diff(old.data, new.data, old_label=f"r{old.number}", new_label=f"r{new.number}")
        context = {
            **self._context(request, package, f"{package.package_id}: revision {old.number} → {new.number}"),
            "old": old,
            "new": new,
            "diff": diff,
            "numbers": list(range(latest, 0, -1)),
        }
        return TemplateResponse(request, "admin/knowledge/package/revision_compare.html", context)

    def revision_revert_view(self, request, object_id, number: int):
        package = self._package_for(request, object_id)
        if not self.has_change_permission(request, package):
            raise PermissionDenied
        note = (request.POST.get("note") or "").strip()[:500]
        before = package.revision_number
        try:
            package = package_revert(acting_user=request.user, package=package, number=number, note=note)
        except RevisionNotFoundError as exc:
            raise Http404("This package has no such revision.") from exc
        except (ValidationError, ApplicationError) as exc:
            self.message_user(
                request, f"Revision {number} cannot be restored: {'; '.join(_error_lines(exc))}", messages.ERROR
            )
            return HttpResponseRedirect(self._url("revisions", package.pk))
        if package.revision_number == before:
            self.message_user(request, f"The content already equals revision {number}: nothing to revert.")
        else:
            self.message_user(
                request,
                f"Restored the content of revision {number} as revision {package.revision_number}.",
                messages.SUCCESS,
            )
            self._warn_unresolved_links(request, package)
        return HttpResponseRedirect(self._url("revisions", package.pk))


# --- read-only companions --------------------------------------------------------------------


@admin.register(PackageRevision)
class PackageRevisionAdmin(StaffReadOnlyMixin, admin.ModelAdmin):
    list_display = ["package", "number", "action", "author", "note", "created_at"]
    list_filter = ["action", ("author", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["package__package_id", "note"]
    list_select_related = ["package", "author"]
    date_hierarchy = "created_at"
    fields = ["package", "number", "action", "author", "note", "created_at", "content_hash", "data"]
    readonly_fields = fields


@admin.register(CatalogState)
class CatalogStateAdmin(StaffReadOnlyMixin, admin.ModelAdmin):
    list_display = ["version", "updated_at"]
    readonly_fields = ["version", "updated_at"]


# --- fetch feedback ------------------------------------------------------------------------


@admin.register(FetchFeedback)
class FetchFeedbackAdmin(StaffReadOnlyMixin, admin.ModelAdmin):
    """What the router learnt from fetches; the weight decays with the half-life setting."""

    list_display = ["package_id", "query_key", "tenant", "listed_then_fetched", "current_weight", "last_fetched_at"]
    list_filter = ["tenant"]
    list_select_related = ["tenant"]
    search_fields = ["package_id", "query_key"]
    readonly_fields = [
        "query_key",
        "package_id",
        "tenant",
        "listed_then_fetched",
        "weight",
        "last_fetched_at",
        "created_at",
    ]

    @admin.display(description="weight now")
    def current_weight(self, obj: FetchFeedback) -> str:
        return f"{obj.weight_at(timezone.now(), half_life_seconds()):.2f}"

    def delete_model(self, request, obj):
        super().delete_model(request, obj)
        feedback_rows_deleted()  # every process drops the row on its next route

    # delete_queryset: the queryset's delete() bumps the version itself (FetchFeedbackQuerySet).


# --- synonym sets ------------------------------------------------------------------------


class SynonymSetForm(forms.ModelForm):
    terms = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3, "cols": 80}),
        help_text="Comma-separated words or short phrases, any language: estorno, reembolso, refund, reembolso.",
    )

    class Meta:
        model = SynonymSet
        fields = ["name", "terms", "is_active"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk and isinstance(self.instance.terms, list):
            self.initial["terms"] = ", ".join(self.instance.terms)

    def clean_terms(self):
        return synonym_terms_clean(self.cleaned_data["terms"])


@admin.register(SynonymSet)
class SynonymSetAdmin(StaffReadCuratorWriteMixin, admin.ModelAdmin):
    """Catalog-wide synonyms applied to questions at query time; a save rebuilds every router index."""

    form = SynonymSetForm
    list_display = ("name", "terms_line", "is_active", "updated_at")
    list_filter = ("is_active",)
    search_fields = ("name",)

    @admin.display(description="terms")
    def terms_line(self, obj):
        return ", ".join(obj.terms or [])

    def save_model(self, request, obj, form, change):
        synonym_set_save(synonym_set=obj, acting_user=request.user)


# --- out-of-scope questions ----------------------------------------------------------------


class OutOfScopeSetForm(forms.ModelForm):
    questions = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 12, "cols": 80}),
        help_text="One per line, any language, as your users would write them: questions they ask that no "
        "package answers (a service you do not offer, another company's or body's job). A message closer to "
        "one of these than to any package gets no article in full.",
    )

    class Meta:
        model = OutOfScopeSet
        fields = ["name", "questions", "is_active"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk and isinstance(self.instance.questions, list):
            self.initial["questions"] = "\n".join(self.instance.questions)

    def clean_questions(self):
        return out_of_scope_questions_clean(self.cleaned_data["questions"])

    def _post_clean(self):
        super()._post_clean()
        # The bound on all active sets together is checked under the catalog lock by the service;
        # checked here too so the form shows it beside the field instead of an error page.
        if not self.errors:
            try:
                out_of_scope_total_check(self.instance)
            except ValidationError as exc:
                self.add_error(None, exc)


@admin.register(OutOfScopeSet)
class OutOfScopeSetAdmin(StaffReadCuratorWriteMixin, admin.ModelAdmin):
    """Questions no package answers, a background of the catalog's own; a save rebuilds every router index."""

    form = OutOfScopeSetForm
    list_display = ("name", "question_count", "is_active", "updated_at")
    list_filter = ("is_active",)
    search_fields = ("name",)

    @admin.display(description="questions")
    def question_count(self, obj):
        return len(obj.questions or [])

    def save_model(self, request, obj, form, change):
        out_of_scope_set_save(out_of_scope_set=obj, acting_user=request.user)

    def get_urls(self):
        info = self.opts.app_label, self.opts.model_name
        view = self.admin_site.admin_view(require_POST(self.propose_view))
        return [path("propose/", view, name="%s_%s_propose" % info), *super().get_urls()]

    def propose_view(self, request):
        """A curator asks the model for questions (knowledge/out_of_scope.py); they arrive as an inactive set."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        from knowledge.out_of_scope import model_configured, out_of_scope_propose_request, proposal_name

        changelist = reverse("admin:knowledge_outofscopeset_changelist")
        if not model_configured():
            self.message_user(
                request,
                "No language model is configured (LLM_PROVIDER=offline): nothing was asked. Write the questions "
                "in a new set.",
                messages.WARNING,
            )
            return HttpResponseRedirect(changelist)
        key = out_of_scope_propose_request()
        if key is None:
            self.message_user(
                request, "The task queue cannot be reached: nothing was asked. Try again later.", messages.ERROR
            )
            return HttpResponseRedirect(changelist)
        self.message_user(
            request,
            f"The model was asked. Its questions will appear here as an inactive set, “{proposal_name(key)}”: "
            "read, edit and activate it.",
            messages.SUCCESS,
        )
        return HttpResponseRedirect(changelist)


# --- search terms proposed at curation time ------------------------------------------------


class SearchTermsForm(forms.ModelForm):
    accepted = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 4, "cols": 80}),
        help_text="Comma-separated. Starts from the model's proposal; saving accepts these terms for the revision.",
    )

    accepted_questions = forms.CharField(
        label="Example questions",
        required=False,
        widget=forms.Textarea(attrs={"rows": 9, "cols": 80}),
        help_text="One per line. Starts from the model's proposal; saving blends them into the revision's "
        "vector, so questions worded like these find it (the revision is re-embedded).",
    )

    class Meta:
        model = RevisionSearchTerms
        fields = ["accepted", "accepted_questions"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        record = self.instance
        terms = record.accepted or [t for lang in ("en", "es") for t in (record.proposed or {}).get(lang, [])]
        self.initial["accepted"] = ", ".join(terms)
        accepted = record.status == RevisionSearchTerms.Status.ACCEPTED
        questions = record.accepted_questions if accepted else proposed_questions(record.proposed)
        self.initial["accepted_questions"] = "\n".join(questions)

    def clean_accepted(self):
        return clean_terms(self.cleaned_data["accepted"])

    def clean_accepted_questions(self):
        return clean_questions(self.cleaned_data["accepted_questions"])


@admin.register(RevisionSearchTerms)
class RevisionSearchTermsAdmin(StaffReadCuratorWriteMixin, admin.ModelAdmin):
    """English/Spanish search terms and example questions the model proposed for a revision; a curator
    edits and accepts them."""

    form = SearchTermsForm
    list_display = ("revision", "status", "proposed_line", "accepted_line", "questions_count", "updated_at")
    list_filter = ("status",)
    readonly_fields = ("revision", "status", "proposed_line", "questions_in_router", "reviewed_by", "updated_at")
    fields = (
        "revision",
        "status",
        "proposed_line",
        "accepted",
        "accepted_questions",
        "questions_in_router",
        "reviewed_by",
        "updated_at",
    )

    actions = ["accept_as_proposed"]

    def has_add_permission(self, request):
        return False  # proposals come from the task, one per revision

    @admin.action(description="Accept the selected proposals as the model proposed them", permissions=["change"])
    def accept_as_proposed(self, request, queryset):
        """For a large catalog: every selected proposal's terms and example questions, unedited. Accepted
        ones and failed asks are left as they are; each revision whose questions change is re-embedded."""
        done, skipped = [], []
        for record in queryset.select_related("revision__package"):
            label = f"{record.revision.package.package_id} r{record.revision.number}"
            if record.status != RevisionSearchTerms.Status.PROPOSED:
                skipped.append(label)
                continue
            proposal = record.proposed or {}
            search_terms_accept(
                record=record,
                terms=[t for lang in ("en", "es") for t in proposal.get(lang, [])],
                questions=proposed_questions(proposal),
                acting_user=request.user,
            )
            done.append(label)
        if done:
            self.message_user(request, f"Accepted as proposed: {', '.join(done)}.", messages.SUCCESS)
        if skipped:
            self.message_user(
                request,
                f"Not waiting for a curator (accepted or failed), left as is: {', '.join(skipped)}.",
                messages.INFO,
            )

    @admin.display(description="proposed")
    def proposed_line(self, obj):
        proposal = obj.proposed or {}
        terms = [f"{lang}: {', '.join(proposal.get(lang) or [])}" for lang in ("en", "es") if proposal.get(lang)]
        questions = proposed_questions(proposal)
        return " · ".join(terms + ([f"{len(questions)} example questions"] if questions else []))

    @admin.display(description="accepted")
    def accepted_line(self, obj):
        return ", ".join(obj.accepted or [])

    @admin.display(description="example questions")
    def questions_count(self, obj):
        return len(obj.accepted_questions or [])

    @admin.display(description="questions in the router")
    def questions_in_router(self, obj):
        """Whether the router reads these accepted questions: their words from the catalog's next version
        on (the "questions" signal), their vectors once the revision's stored vector is the one for them
        (the re-embedding after an accept runs in a task; the beat sweep catches a lost one)."""
        from knowledge.retrieval.questions import question_terms
        from knowledge.routing_service import router_config

        questions = obj.accepted_questions or []
        if obj.status != RevisionSearchTerms.Status.ACCEPTED or not questions:
            return "—"
        if not (obj.revision.data or {}).get("body", "").strip():
            return "no: a revision without a body is not in the router, and never embedded"
        package = obj.revision.package
        if not package.is_active:  # (deactivating writes a revision: checked before the current one)
            return "no: the package is inactive, so it is not in the router"
        if obj.revision.number != package.revision_number:
            return f"no: the router reads the package's current revision (r{package.revision_number}), not this one"
        if not router_config().weights.get("questions"):
            words = "words: no, the questions signal weighs 0 (KNOWLEDGE_QUESTIONS_WEIGHT)"
        elif not question_terms(questions):
            words = "words: no, the questions hold only stop words"
        else:
            words = "words: yes, for messages of one part"
        if not retrieval_embeddings.enabled():
            return f"{words} · vector: no, the embedding model is off (CONTEXTO_EMBEDDINGS)"
        stored = RevisionEmbedding.objects.filter(revision=obj.revision, model_id=retrieval_embeddings.MODEL_ID).first()
        if stored is None or stored.text_digest != text_digest(embedded_text(revision_text(obj.revision), questions)):
            return f"{words} · vector: not yet: waiting for the embedding task"
        rows = len(bytes(stored.example_vectors)) // (retrieval_embeddings.DIM * 4)
        return f"{words} · vector: yes, {rows} example questions"

    def save_model(self, request, obj, form, change):
        search_terms_accept(
            record=obj,
            terms=form.cleaned_data["accepted"],
            questions=form.cleaned_data["accepted_questions"],
            acting_user=request.user,
        )
