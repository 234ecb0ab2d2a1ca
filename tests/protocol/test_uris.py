"""URIs in RFC 3986's normal form, and URI templates that may match one URI."""

import pytest

from approvals.protocol.uri_templates import expanded, matches, overlaps
from approvals.protocol.uris import normalized, remove_dot_segments


@pytest.mark.parametrize(
    "path, left",
    [
        # RFC 3986, section 5.4's abnormal and normal examples, as paths.
        ("/a/b/c/./../../g", "/a/g"),
        ("mid/content=5/../6", "mid/6"),
        ("/a/b/..", "/a/"),
        ("/../../etc/passwd", "/etc/passwd"),
        ("/.", "/"),
        ("/a/./b/.", "/a/b/"),
        ("/a/b", "/a/b"),
    ],
)
def test_it_removes_dot_segments_as_rfc_3986_does(path, left):
    assert remove_dot_segments(path) == left


@pytest.mark.parametrize(
    "uri, form",
    [
        ("FILE://Ex%41mple.COM/docs/%7eada/../plan", "file://example.com/docs/plan"),
        ("docs://x/%2e%2E/readme", "docs://x/readme"),
        ("docs://readme?q=%2f%41#%7e", "docs://readme?q=%2FA#~"),
        ("http://U%3aser@HOST:8080/a", "http://U%3Aser@host:8080/a"),
        ("docs://readme", "docs://readme"),
        ("urn:isbn:0451450523", "urn:isbn:0451450523"),
        ("notes://by-topic/%zz", "notes://by-topic/%zz"),
    ],
)
def test_it_normalizes_case_escapes_and_dot_segments(uri, form):
    assert normalized(uri) == form
    assert normalized(form) == form


@pytest.mark.parametrize(
    "first, second, meet",
    [
        ("file:///{+path}", "file:///docs/{name}", True),
        ("file:///{path}", "file:///docs/{name}", False),  # a simple variable holds no '/'
        ("demo://a/{x}", "demo://b/{x}", False),
        ("demo://a{/x}", "demo://a", True),
        ("demo://a{?q}", "demo://a/b", False),
        ("x{.ext}", "x.{y}", True),
        ("a/{+x}/b", "a/{y}", False),
        ("{x}", "{y}", True),
        ("a/b", "a/c", False),
    ],
)
def test_it_tells_whether_two_templates_can_match_one_uri(first, second, meet):
    assert overlaps(first, second) is meet
    assert overlaps(second, first) is meet


@pytest.mark.parametrize("template", ["a{/x}", "a{x}", "a{+x}", "a{.x}", "a{?q}", "a{;p}", "a/{x}/c", "a{#f}"])
@pytest.mark.parametrize("uri", ["a/b/c", "a", "ab", "a.b", "a?q=1", "a;p=1", "a/q/c", "a#f", "a.b/c"])
def test_a_template_overlaps_a_plain_uri_exactly_when_it_matches_it(template, uri):
    assert overlaps(template, uri) is matches(template, uri)


def test_it_counts_an_overlap_it_cannot_rule_out_in_time_as_one():
    first, second = "{+a}" * 100 + "q", "x" * 1000 + "z"

    assert overlaps(first, second, budget=1_000) is True
    assert overlaps("{+a}" * 5 + "q", "x" * 50 + "z") is False


def test_it_expands_a_template_with_the_values_it_is_given():
    assert expanded("file:///{+path}", {"path": "etc/pa ss"}) == "file:///etc/pa%20ss"
    assert expanded("notes://by-topic/{topic}{?page}", {"topic": "a/b"}) == "notes://by-topic/a%2Fb"
