from rest_framework import serializers


class StrictSerializer(serializers.Serializer):
    """An input serializer that refuses fields it does not declare.

    A typo in a field name is an error the caller should see, not something
    silently ignored.
    """

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({name: ["Unknown field."] for name in unknown})
        return super().to_internal_value(data)


class StrictCharField(serializers.CharField):
    """A JSON string only: DRF's CharField turns ``4821`` into ``"4821"``, hiding a client bug."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer only: no ``"100"``, no ``100.0``, no ``true``."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictDecimalField(serializers.DecimalField):
    """A JSON number, or a numeric string (to keep precision); ``""`` is not a number.

    DRF's DecimalField read ``"budget": ""`` as null when the field allows null.
    """

    def validate_empty_values(self, data):
        if isinstance(data, str) and not data.strip():
            self.fail("invalid")
        return super().validate_empty_values(data)

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, (int, float, str)):
            self.fail("invalid")
        return super().to_internal_value(data)
