"""The topology tests share one worker of `make test`: each starts processes that take much of the machine."""

import pytest


def test_it_runs_in_its_folders_group_under_xdists_loadgroup(request):
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("not a worker of `--dist loadgroup` (make test): no groups to keep")
    # xdist's loadgroup schedules by a group suffix on the test's id: without it the test goes to any worker.
    assert request.node.nodeid.endswith("@topology")
