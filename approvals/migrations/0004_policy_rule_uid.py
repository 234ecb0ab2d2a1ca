import uuid

from django.db import migrations, models


def give_each_rule_a_uid(apps, schema_editor):
    PolicyRule = apps.get_model("approvals", "PolicyRule")
    for rule in PolicyRule.objects.filter(uid__isnull=True):
        rule.uid = uuid.uuid4()
        rule.save(update_fields=["uid"])


class Migration(migrations.Migration):
    dependencies = [("approvals", "0002_tool_review")]

    operations = [
        migrations.AddField(model_name="policyrule", name="uid", field=models.UUIDField(null=True, editable=False)),
        migrations.RunPython(give_each_rule_a_uid, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="policyrule",
            name="uid",
            field=models.UUIDField(default=uuid.uuid4, editable=False, unique=True),
        ),
    ]
