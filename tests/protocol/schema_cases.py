"""What the schema tests share: the drafts' addresses, and the reason a schema is refused."""

import pytest

from approvals.protocol.schemas import SchemaError, check_schema

DRAFT_07 = "http://json-schema.org/draft-07/schema#"
DRAFT_04 = "http://json-schema.org/draft-04/schema#"


def reason_for(schema):
    with pytest.raises(SchemaError) as caught:
        check_schema(schema)
    return caught.value.reason
