"""Config validation, variant resolution and Flower run-config conversion."""

import dataclasses

import pytest

from iclr26_federated.methods.fedopenmatch.config import PRESETS, VARIANTS, FedOpenMatchConfig, JobParams, job_params
from iclr26_shared.errors import ConfigError


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("dataset", "imagenet"),
        ("known_classes", 1),
        ("num_clients", 1),
        ("dirichlet_alpha", 0.0),
        ("fraction_train", 0.0),
        ("la_sign", 2),
        ("la_weight", -1.0),
        ("consistency", "mse"),
        ("tau_in", 1.5),
        ("tau_neg", 0.95),
        ("variants", ("fedopenmatch", "fedprox")),
        ("variants", ()),
        ("engine", "dask"),
        ("fail_client", 7),
        ("client_cpus", 0.5),
        ("num_rounds", 0),
        ("arch", "vit"),
    ],
)
def test_bad_config_raises_config_error_naming_the_field(field: str, value: object) -> None:
    with pytest.raises(ConfigError, match=f"'{field}(\\[\\d+\\])?'"):
        dataclasses.replace(PRESETS["smoke"], **{field: value})


def test_presets_are_valid_and_quick_runs_every_variant() -> None:
    assert set(PRESETS) >= {"smoke", "quick", "full"}
    assert set(PRESETS["quick"].variants) == set(VARIANTS)
    assert PRESETS["quick"].engine == "ray" and PRESETS["smoke"].engine == "inline"


def test_variant_flags() -> None:
    cfg = FedOpenMatchConfig()
    full = job_params(cfg, "fedopenmatch", 0)
    assert full.gradient_stop and full.la_weight == cfg.la_weight and full.consistency == "lcr"
    assert full.client_ova == "pseudo" and full.inlier_filter and full.use_ova and full.federated
    assert not job_params(cfg, "no-gs", 0).gradient_stop
    assert job_params(cfg, "no-la", 0).la_weight == 0.0
    assert job_params(cfg, "no-lcr", 0).consistency == "socr"
    om = job_params(cfg, "fedavg-openmatch", 0)
    assert (om.gradient_stop, om.la_weight, om.consistency, om.client_ova) == (False, 0.0, "socr", "oem")
    fm = job_params(cfg, "fedavg-fixmatch", 0)
    assert not fm.use_ova and not fm.inlier_filter and fm.consistency == "none"
    assert not job_params(cfg, "labeled-only", 0).federated


def test_job_params_record_round_trip() -> None:
    p = job_params(PRESETS["smoke"], "no-gs", 5, device="cpu")
    record = {**p.to_record(), "server-round": 3}
    assert JobParams.from_record(record) == p
    with pytest.raises(ConfigError, match="seed"):
        JobParams.from_record({k: v for k, v in p.to_record().items() if k != "seed"})


def test_run_config_conversion() -> None:
    from iclr26_federated.methods.fedopenmatch.utils import config_from_run_config

    cfg, common = config_from_run_config(
        {"preset": "smoke", "num-rounds": 3, "variants": "fedopenmatch, labeled-only", "seed": 2, "out-dir": "x"}
    )
    assert cfg.num_rounds == 3 and cfg.variants == ("fedopenmatch", "labeled-only") and cfg.num_clients == 2
    assert common == {"preset": "smoke", "seed": 2, "device": "auto", "out_dir": "x", "run_dir": ""}
    # "" (the pyproject default of every field) keeps the preset's value
    cfg, common = config_from_run_config({"preset": "quick", "num-rounds": "", "dirichlet-alpha": 0.1})
    assert cfg == dataclasses.replace(PRESETS["quick"], dirichlet_alpha=0.1) and common["preset"] == "quick"
    with pytest.raises(ConfigError, match="'no-such-key'.*declared run-config key.*dirichlet-alpha"):
        config_from_run_config({"no-such-key": 1})
    with pytest.raises(ConfigError, match="num_rounds"):
        config_from_run_config({"num-rounds": "many"})


def test_run_config_round_trip_and_flwr_text() -> None:
    from iclr26_federated.methods.fedopenmatch.utils import (
        config_from_run_config,
        run_config_from_config,
        run_config_string,
    )

    cfg = dataclasses.replace(PRESETS["quick"], variants=("no-gs", "labeled-only"), hflip=True, lr=0.01)
    back, _ = config_from_run_config({"preset": "smoke", **run_config_from_config(cfg)})
    assert back == cfg
    text = run_config_string({"variants": "no-gs,labeled-only", "hflip": True, "lr": 0.01, "num-rounds": 6})
    assert text == "variants='no-gs,labeled-only' hflip=true lr=0.01 num-rounds=6"


def test_pyproject_declares_every_config_field() -> None:
    """``flwr run --run-config`` refuses undeclared keys: every field must be in [tool.flwr.app.config]."""
    import tomllib

    from iclr26_federated.methods.fedopenmatch.utils import APP_DIR, COMMON_RUN_CONFIG, config_from_run_config

    declared = tomllib.loads((APP_DIR / "pyproject.toml").read_text())["tool"]["flwr"]["app"]["config"]
    fields = {f.name.replace("_", "-") for f in dataclasses.fields(FedOpenMatchConfig)}
    assert set(declared) == fields | set(COMMON_RUN_CONFIG)
    assert all(declared[k] == "" for k in fields)  # "" = the preset's value
    cfg, common = config_from_run_config(declared)  # the app's defaults: the smoke preset
    assert cfg == PRESETS[declared["preset"]] and common["preset"] == "smoke"
    from iclr26_federated.methods.fedopenmatch.utils import check_run_config_keys

    check_run_config_keys({"dirichlet-alpha": 0.1, "preset": "quick"})
    with pytest.raises(ConfigError, match="'dirichlet_alpha'.*declared in"):
        check_run_config_keys({"dirichlet_alpha": 0.1})  # snake_case is not a declared key
