def on_postgresql(statements):
    """A RunPython function running `statements` on PostgreSQL only: triggers SQLite has no equivalent for."""

    def execute(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            for statement in statements:
                schema_editor.execute(statement, params=None)

    return execute
