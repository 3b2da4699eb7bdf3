"""How forms render on the pages: one template (``{{ form }}``) that shows errors about
the whole form once and each field's errors at that field."""

from __future__ import annotations

from django.forms.renderers import DjangoTemplates


class FormRenderer(DjangoTemplates):
    """Django's renderer with the pages' form template."""

    form_template_name = "assessor_ui/forms/form.html"
