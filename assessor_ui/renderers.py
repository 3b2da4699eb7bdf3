"""How forms render on the pages: one template (``{{ form }}``) that shows errors about
the whole form once and each field's errors at that field, right below its input."""

from __future__ import annotations

from django.forms.renderers import DjangoTemplates


class FormRenderer(DjangoTemplates):
    """Django's renderer with the pages' form template."""

    form_template_name = "assessor_ui/forms/form.html"
    field_template_name = "assessor_ui/forms/field.html"
