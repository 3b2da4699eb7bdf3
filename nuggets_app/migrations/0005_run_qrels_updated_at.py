import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("nuggets_app", "0004_result_evidence_kept_per_chunk")]

    operations = [
        migrations.AddField(
            model_name="run",
            name="updated_at",
            field=models.DateTimeField(
                auto_now=True, default=django.utils.timezone.now
            ),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="qrels",
            name="updated_at",
            field=models.DateTimeField(
                auto_now=True, default=django.utils.timezone.now
            ),
            preserve_default=False,
        ),
    ]
