from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("nuggets_app", "0001_initial"),
    ]

    operations = [
        migrations.RenameField(
            model_name="collection",
            old_name="relevance_level",
            new_name="relevance_level_setting",
        ),
        migrations.RenameField(
            model_name="matchjob",
            old_name="relevance_level",
            new_name="relevance_level_setting",
        ),
        migrations.AlterField(
            model_name="collection",
            name="relevance_level_setting",
            field=models.PositiveSmallIntegerField(
                blank=True, null=True, verbose_name="relevance level"
            ),
        ),
        migrations.AlterField(
            model_name="matchjob",
            name="relevance_level_setting",
            field=models.PositiveSmallIntegerField(
                blank=True, null=True, verbose_name="relevance level"
            ),
        ),
    ]
