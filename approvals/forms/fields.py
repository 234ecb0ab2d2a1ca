"""Form pieces the domains' forms share."""

import json

from django import forms


class SafeChoiceField(forms.TypedChoiceField):
    """Radio buttons over a model's choices, starting at the safe one.

    Optional so that a post without the field (an older page, a script) keeps the safe choice.
    """

    widget = forms.RadioSelect

    def __init__(self, model_choices, safe, **kwargs):
        super().__init__(choices=model_choices.choices, initial=safe, required=False, empty_value=safe, **kwargs)


class EditingForm(forms.Form):
    """A form that adds an object or, given one as `editing`, changes it: its fields then start from the object."""

    def __init__(self, *args, editing=None, **kwargs):
        if editing is not None:
            kwargs.setdefault("initial", self.initial_from(editing))
        super().__init__(*args, **kwargs)

    def initial_from(self, editing) -> dict:
        raise NotImplementedError


def json_field(text: str, empty):
    """The JSON value typed into a field, `empty` for nothing; a ValidationError saying where it breaks."""
    try:
        return json.loads(text) if text.strip() else empty
    except json.JSONDecodeError as exc:
        raise forms.ValidationError(f"Not valid JSON: {exc}.") from None
    except RecursionError:
        raise forms.ValidationError("Not valid JSON here: nested too deeply.") from None


def whole_number(text, most_digits: int = 12) -> int | None:
    """A whole number of at most `most_digits` ASCII digits, else None.

    str.isdigit() alone also takes '²', which int() refuses, and '١٢', which int() reads: a page
    number or cursor is written the one way, and no longer than a column holds.
    """
    text = str(text or "").strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) <= most_digits else None
