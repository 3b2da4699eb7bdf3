from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("nuggets_app", "0016_judgment_version_work_history")]

    operations = [
        migrations.AddField(
            model_name="sample",
            name="nuggets_shared",
            field=models.BooleanField(
                default=True,
                help_text="Assessors see the nuggets others found for the same topic.",
            ),
        ),
    ]
