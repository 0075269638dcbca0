"""The run_script description promises only JavaScript that runs: each claim of LANGUAGE has probes, and each
probe is true in a real worker."""

from __future__ import annotations

import re

import pytest

from demo import create_app
from gateway import Gateway, ScriptConfig
from sandbox import Sandbox
from sandbox.language import LANGUAGE, LANGUAGE_PROBES
from sandbox.pool import log_engine
from tests.sandbox.conftest import Shop

pytestmark = pytest.mark.anyio

PROBES = [(claim, probe) for claim, probes in LANGUAGE_PROBES.items() for probe in probes]


def test_every_claim_of_the_language_has_probes_and_every_probe_a_claim() -> None:
    named = set(re.findall(r"`([^`]+)`", LANGUAGE)) | set(re.findall(r"\bES20\d\d\b", LANGUAGE))
    assert named == set(LANGUAGE_PROBES)


@pytest.mark.parametrize(("claim", "probe"), PROBES, ids=[f"{claim}: {probe[:40]}" for claim, probe in PROBES])
async def test_what_the_language_claims_runs_in_a_worker(sandbox: Sandbox, shop: Shop, claim: str, probe: str) -> None:
    result = await sandbox.run(probe, shop)
    assert result.value is True, (claim, result)


def test_the_run_script_description_states_the_language_and_no_other_edition() -> None:
    gateway = Gateway(app=create_app(), whoami="users.get_current_user", scripts=ScriptConfig())
    (description,) = [tool.description for tool in gateway.tools() if tool.name == "run_script"]
    assert f"JavaScript program ({LANGUAGE})" in description
    assert set(re.findall(r"\bES20\d\d\b", description)) == set(re.findall(r"\bES20\d\d\b", LANGUAGE))


def test_workers_on_another_binding_are_a_warning_once(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("INFO", logger="sandbox"):
        log_engine("quickjs-ng")
        log_engine("quickjs 0.0 (a test)")
        log_engine("quickjs 0.0 (a test)")
    (record,) = caplog.records
    assert record.levelname == "WARNING"
    assert "not quickjs-ng" in record.getMessage() and "pip install 'quickjs-ng" in record.getMessage()
