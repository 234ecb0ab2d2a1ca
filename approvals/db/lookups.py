"""`id__any_of=ids`: a filter on many ids that a driver need not parse afresh each time.

`pk__in` puts one placeholder per id into the statement. psycopg caches its parsing of
statements of at most 50 parameters only, and parses one of thousands (every call a process
holds, at each re-read) in Python again each time; on PostgreSQL this passes the ids as one
array parameter instead. Elsewhere it is `__in`.
"""

from django.db.models import BigAutoField, Lookup
from django.db.models.lookups import In


@BigAutoField.register_lookup
class AnyOf(Lookup):
    lookup_name = "any_of"
    prepare_rhs = False

    def get_prep_lookup(self):
        return list(self.rhs)

    def as_sql(self, compiler, connection):
        return compiler.compile(In(self.lhs, self.rhs))

    def as_postgresql(self, compiler, connection):
        lhs, params = self.process_lhs(compiler, connection)
        return f"{lhs} = ANY(%s)", (*params, self.rhs)
