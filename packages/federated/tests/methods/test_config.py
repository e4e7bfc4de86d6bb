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
    from iclr26_federated.methods.fedopenmatch.utils import RunConfigCommon, config_from_run_config

    cfg, common = config_from_run_config(
        {"preset": "smoke", "num-rounds": 3, "variants": "fedopenmatch, labeled-only", "seed": 2, "out-dir": "x"}
    )
    assert cfg.num_rounds == 3 and cfg.variants == ("fedopenmatch", "labeled-only") and cfg.num_clients == 2
    assert common == RunConfigCommon(preset="smoke", seed=2, device="auto", out_dir="x", run_dir="")
    # "" (the pyproject default of every field) keeps the preset's value
    cfg, common = config_from_run_config({"preset": "quick", "num-rounds": "", "dirichlet-alpha": 0.1})
    assert cfg == dataclasses.replace(PRESETS["quick"], dirichlet_alpha=0.1) and common.preset == "quick"
    with pytest.raises(ConfigError, match="'no-such-key'.*declared run-config key.*dirichlet-alpha"):
        config_from_run_config({"no-such-key": 1})
    with pytest.raises(ConfigError, match="num_rounds"):
        config_from_run_config({"num-rounds": "many"})
    with pytest.raises(ConfigError, match="'seed'"):
        config_from_run_config({"seed": -1})
    with pytest.raises(ConfigError, match="'preset'"):
        config_from_run_config({"preset": "quik"})


#: A value different from the smoke preset's for every config field (a new field must be added here).
_CHANGED: dict[str, object] = {
    "dataset": "digits",
    "data_file": "/data/mine.npz",
    "known_classes": 5,
    "unknown_classes": 3,
    "labels_per_class": 7,
    "num_clients": 3,
    "dirichlet_alpha": 0.1,
    "min_partition_size": 4,
    "max_client_pool": 90,
    "hflip": True,
    "arch": "resnet18",
    "width": 5,
    "num_rounds": 4,
    "fraction_train": 0.75,
    "max_failed_fraction": 0.25,
    "local_epochs": 2,
    "warmup_steps": 11,
    "server_steps": 6,
    "batch_size": 17,
    "lr": 0.0125,
    "momentum": 0.5,
    "weight_decay": 1e-3,
    "gradient_stop": False,
    "la_weight": 0.5,
    "la_on_server": True,
    "la_sign": -1,
    "consistency": "socr",
    "lcr_weight": 0.25,
    "socr_weight": 0.75,
    "oem_weight": 0.2,
    "openmatch_fix_start": 2,
    "tau_in": 0.9,
    "tau_pos": 0.8,
    "tau_neg": 0.2,
    "msp_threshold": 0.6,
    "variants": ("no-gs", "labeled-only"),
    "num_seeds": 2,
    "engine": "ray",
    "client_cpus": 2,
    "client_gpus": 0.5,
    "ray_cpus": 3,
    "fail_client": 1,
    "fail_round": 2,
}


def test_every_config_field_round_trips_through_flwr_run_config(tmp_path) -> None:
    """What ``flwr run --run-config <file>.toml`` does with our file: Flower's own parser, then its fusion
    with the app's declared ``[tool.flwr.app.config]`` (which refuses undeclared keys), then our ServerApp's
    conversion: every field comes back with its changed value."""
    from flwr.common.config import get_fused_config_from_dir, parse_config_args

    from iclr26_federated.methods.fedopenmatch.flwr_app import materialize_app
    from iclr26_federated.methods.fedopenmatch.utils import (
        RunConfigCommon,
        config_from_run_config,
        run_config_from_config,
        write_run_config,
    )

    app_dir = materialize_app(tmp_path / "app")  # the packaged app, as `flwr run` gets it from a wheel

    assert set(_CHANGED) == {f.name for f in dataclasses.fields(FedOpenMatchConfig)}
    smoke = PRESETS["smoke"]
    assert all(getattr(smoke, k) != v for k, v in _CHANGED.items()), "each value must differ from the preset's"
    cfg = dataclasses.replace(smoke, **_CHANGED)
    common = RunConfigCommon(preset="quick", seed=12, device="cpu", out_dir="o u't", run_dir="/tmp/r\\x")
    path = write_run_config(run_config_from_config(cfg, common), tmp_path / "run-config.toml")
    fused = get_fused_config_from_dir(app_dir, parse_config_args([str(path)]))
    # the preset quick's values would show through any field that failed to travel
    back, back_common = config_from_run_config(fused)
    assert back_common == common
    assert back == dataclasses.replace(PRESETS["quick"], **_CHANGED) == cfg
    # an undeclared key: Flower refuses it, and we refuse it before calling Flower, naming it
    with pytest.raises(ValueError, match="no-such-key"):
        get_fused_config_from_dir(app_dir, {"no-such-key": 1})
    with pytest.raises(ConfigError, match="'no-such-key'.*declared in"):
        write_run_config({"no-such-key": 1}, tmp_path / "bad.toml")


def test_pyproject_declares_exactly_the_config_fields() -> None:
    """``flwr run --run-config`` refuses undeclared keys: [tool.flwr.app.config] = the config's fields (+ the
    common run keys), each field ``""`` = the preset's value."""
    from iclr26_federated.methods.fedopenmatch.utils import (
        COMMON_RUN_CONFIG,
        RunConfigCommon,
        check_run_config_keys,
        config_from_run_config,
        declared_run_config,
    )

    declared = declared_run_config()
    fields = {f.name.replace("_", "-") for f in dataclasses.fields(FedOpenMatchConfig)}
    assert set(declared) == fields | set(COMMON_RUN_CONFIG)
    assert all(declared[k] == "" for k in fields)  # "" = the preset's value
    cfg, common = config_from_run_config(declared)  # the app's defaults: the smoke preset
    assert cfg == PRESETS[declared["preset"]] and common == RunConfigCommon(device="cpu")
    check_run_config_keys({"dirichlet-alpha": 0.1, "preset": "quick"})
    with pytest.raises(ConfigError, match="'dirichlet_alpha'.*declared in"):
        check_run_config_keys({"dirichlet_alpha": 0.1})  # snake_case is not a declared key


def test_a_job_seed_above_the_default_int_bound_is_accepted() -> None:
    """Issue 52: --seed goes up to 2**32 - 1 and job seeds add the seed index, so a JobParams seed may exceed
    2**31 - 1 (the default integer bound); it travels to the clients and back unchanged."""
    seed = 2**32 - 1 + 2
    params = job_params(PRESETS["smoke"], "fedopenmatch", seed)
    assert params.seed == seed and JobParams.from_record(params.to_record()).seed == seed
