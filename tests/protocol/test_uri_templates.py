import time

import pytest

from approvals.protocol.uri_templates import matches, template_errors


@pytest.mark.parametrize(
    "template, uri",
    [
        ("notes://by-topic/{topic}", "notes://by-topic/beta"),
        ("file:///{+path}", "file:///docs/a/b.md"),
        ("search://q{?term,page}", "search://q?term=x&page=2"),
        ("search://q{?term,page}", "search://q"),
        ("repo://{owner}{/path*}", "repo://me/src/main.py"),
        ("doc://{name}{.ext}", "doc://readme.md"),
        ("page://x{#section}", "page://x#intro"),
    ],
)
def test_it_matches_a_uri_some_values_would_expand_the_template_to(template, uri):
    assert template_errors(template) == []
    assert matches(template, uri)


@pytest.mark.parametrize(
    "template, uri",
    [
        ("notes://by-topic/{topic}", "notes://by-topic/a/b"),
        ("notes://by-topic/{topic}", "notes://other/beta"),
        ("search://q{?term}", "search://q#frag"),
        ("doc://{name}.md", "doc://readme.txt"),
    ],
)
def test_it_does_not_match_a_uri_of_another_shape(template, uri):
    assert not matches(template, uri)


@pytest.mark.parametrize("template", ["a://{x", "a://x}", "a://{x y}", "a://{}", "a://{x:0}"])
def test_it_finds_malformed_templates(template):
    assert template_errors(template)


def test_it_matches_a_hostile_template_without_backtracking():
    started = time.monotonic()
    assert not matches("{a}x" * 40 + "y", "x" * 2000)
    assert time.monotonic() - started < 2
