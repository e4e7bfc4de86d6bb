"""``fgl`` run: FGL, its ablations and the baselines under one training loop, over graphs and seeds.

For every graph (one per cSBM ``φ``, or the named data set) and seed: load the graph and split, run FGL's
pre-processing once, train FGL (and, on the ablation graph, the variants that reuse the same Ĝ and α:
uniform trees, a single tree, without global, without local), then every baseline. Each (graph, seed)
unit is checkpointed, so ``--resume`` continues after the last finished unit.
"""

from __future__ import annotations

import contextlib
import copy
import math
import statistics
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, cast

import torch
import torch.nn.functional as F
from torch import nn

from iclr26_graphs.data.csbm import CsbmParams
from iclr26_graphs.data.registry import graph_tensors, load_graph
from iclr26_graphs.methods.fgl.config import FGLConfig
from iclr26_graphs.methods.fgl.model import FGL, FGLStructure, Modules, make_baseline
from iclr26_graphs.methods.fgl.preprocess import build_structure, pseudo_labels, sample_trees, tree_homophily
from iclr26_graphs.nn.forest_conv import Direction
from iclr26_shared.plotting import plot_bars, plot_curves
from iclr26_shared.runs import RunDir
from iclr26_shared.seeding import keeps_global_rng, seed_everything

if TYPE_CHECKING:
    from torch_geometric.data import Data

__all__ = ["dry_run", "fit", "graph_names", "run", "train_node_classifier"]


@contextlib.contextmanager
def torch_threads(num: int) -> Iterator[None]:
    """Run the block with ``torch.set_num_threads(num)`` (0: leave torch's setting), then restore it.

    CPU float reductions (``index_add``, matmul) split their work by thread, so the same seed gives other
    bits under another thread count; the bits then grow into other validation choices. The process backend
    inherits torch's default (the core count) and a Ray task runs with one thread (Ray sets
    ``OMP_NUM_THREADS=1``), so a fixed count makes a seed's result the same under both."""
    before = torch.get_num_threads()
    if num > 0:
        torch.set_num_threads(num)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def train_node_classifier(
    model: nn.Module,
    forward: Callable[[], torch.Tensor],
    y: torch.Tensor,
    train_mask: torch.Tensor,
    val_mask: torch.Tensor,
    test_mask: torch.Tensor,
    *,
    epochs: int,
    lr: float,
    weight_decay: float,
    patience: int,
) -> dict[str, float]:
    """Full-batch Adam on the training nodes; the test accuracy is read at the best validation epoch, and
    the model is left with that epoch's weights (what a saved model reproduces)."""
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    best_val, test_at_best, best_epoch = -1.0, 0.0, 0
    best_state = copy.deepcopy(model.state_dict())
    t0 = time.perf_counter()
    epoch = 0
    for epoch in range(1, epochs + 1):
        model.train()
        opt.zero_grad()
        loss = F.cross_entropy(forward()[train_mask], y[train_mask])
        loss.backward()
        opt.step()
        model.eval()
        with torch.no_grad():
            pred = forward().argmax(-1)
        val = float((pred[val_mask] == y[val_mask]).float().mean())
        if val > best_val:
            best_val, best_epoch = val, epoch
            test_at_best = float((pred[test_mask] == y[test_mask]).float().mean()) if bool(test_mask.any()) else 0.0
            best_state = copy.deepcopy(model.state_dict())
        elif epoch - best_epoch >= patience:
            break
    model.load_state_dict(best_state)
    model.eval()
    return {
        "val_acc": best_val,
        "test_acc": test_at_best,
        "best_epoch": best_epoch,
        "epochs": epoch,
        "seconds_per_epoch": (time.perf_counter() - t0) / max(epoch, 1),
    }


def graph_names(cfg: FGLConfig) -> list[tuple[str, float | None]]:
    """``(label, φ)`` of every graph the run covers."""
    if cfg.dataset == "csbm":
        return [(f"csbm(phi={phi:+.2f})", phi) for phi in cfg.phis]
    return [(cfg.dataset, None)]


def _fgl(
    cfg: FGLConfig,
    num_features: int,
    num_classes: int,
    betas: tuple[float, float],
    modules: Modules | None = None,
    tree_message: Direction | None = None,
) -> FGL:
    return FGL(
        num_features,
        num_classes,
        hidden_channels=cfg.hidden,
        num_trees=cfg.num_trees,
        beta1=betas[0],
        beta2=betas[1],
        k_local=cfg.k_local,
        gamma=cfg.gamma,
        dropout=cfg.dropout,
        modules=modules or cfg.modules,
        normalize_tree_weights=cfg.normalize_tree_weights,
        tree_message=tree_message or cfg.tree_message,
    )


def grid(cfg: FGLConfig) -> list[tuple[int, tuple[float, float]]]:
    """The ``(k, (β1, β2))`` candidates tuned on validation accuracy (just the fixed values without grids)."""
    ks = cfg.tune_knn_k or (cfg.knn_k,)
    betas = cfg.tune_betas or ((cfg.beta1, cfg.beta2),)
    return [(k, b) for k in ks for b in betas]


def steps_per_unit(cfg: FGLConfig, ablate: bool) -> int:
    """Progress steps of one (graph, seed) unit: one per pre-processed structure and per trained model."""
    ks = len(dict.fromkeys(k for k, _ in grid(cfg)))
    return ks + len(grid(cfg)) + int(cfg.both_directions) + 4 * int(ablate) + len(cfg.compare)


def _load(cfg: FGLConfig, phi: float | None, seed: int, device: torch.device) -> Data:
    """The graph of one unit (the cSBM at ``φ`` drawn with ``seed``, or the named data set) and its split."""
    params = None
    if phi is not None:
        params = CsbmParams(cfg.csbm_nodes, cfg.csbm_features, cfg.csbm_degree, cfg.csbm_epsilon, phi)
    return load_graph(
        cfg.dataset,
        seed=seed,
        csbm=params,
        train_per_class=cfg.train_per_class,
        val_per_class=cfg.val_per_class,
        split_index=cfg.split_index,
    ).to(device)


def _baseline_kwargs(cfg: FGLConfig) -> dict[str, float]:
    """The config fields a baseline is built from (see :func:`make_baseline`)."""
    return dict(
        hidden=cfg.hidden,
        dropout=cfg.dropout,
        appnp_k=cfg.appnp_k,
        appnp_alpha=cfg.appnp_alpha,
        gcnii_layers=cfg.gcnii_layers,
    )


def _unit(
    cfg: FGLConfig,
    phi: float | None,
    seed: int,
    ablate: bool,
    device: torch.device,
    tick: Callable[[str], None] = lambda _: None,
) -> tuple[dict[str, Any], FGL]:
    """One graph and seed: tune (k, β1, β2) on validation accuracy, then every model's test accuracy and
    the tree diagnostics at the chosen setting. Returns the results and the chosen FGL (best validation
    weights, structure set); ``tick(what)`` is called after every structure and every trained model."""
    data = _load(cfg, phi, seed, device)
    g = graph_tensors(data)
    n = g.x.size(0)
    num_classes = int(g.y.max()) + 1
    masks = (g.y, g.train_mask, g.val_mask, g.test_mask)

    def fit(model: nn.Module, forward: Callable[[], torch.Tensor], what: str) -> dict[str, float]:
        res = train_node_classifier(
            model, forward, *masks, epochs=cfg.epochs, lr=cfg.lr, weight_decay=cfg.weight_decay, patience=cfg.patience
        )
        tick(what)
        return res

    def fit_fgl(
        struct: FGLStructure,
        betas: tuple[float, float],
        modules: Modules | None = None,
        tree_message: Direction | None = None,
        what: str = "fgl",
    ) -> tuple[dict[str, float], FGL]:
        torch.manual_seed(seed)
        model = _fgl(cfg, g.x.size(1), num_classes, betas, modules, tree_message).to(device).set_structure(struct)
        return fit(model, lambda: model(g.x), what), model

    gen = torch.Generator(device=device).manual_seed(seed)
    seed_everything(seed)
    t0 = time.perf_counter()
    pseudo = pseudo_labels(
        g.x,
        g.edge_index,
        g.y,
        g.train_mask,
        g.val_mask,
        model=cfg.pseudo_model,
        epochs=cfg.pseudo_epochs,
        lr=cfg.lr,
        weight_decay=cfg.weight_decay,
    )
    built: dict[int, tuple[FGLStructure, dict[str, Any]]] = {}
    for k in dict.fromkeys(k for k, _ in grid(cfg)):
        built[k] = build_structure(
            g.x,
            g.edge_index,
            g.y,
            g.train_mask,
            g.val_mask,
            num_trees=cfg.num_trees,
            knn_k=k,
            estimator_channels=cfg.estimator_channels,
            estimator_epochs=cfg.estimator_epochs,
            lr=cfg.lr,
            weight_decay=cfg.weight_decay,
            uniform_trees=cfg.tree_sampling == "uniform",
            sampler=cfg.sampler,
            score_floor=cfg.tree_score_floor,
            generator=gen,
            pseudo=pseudo,
        )
        tick(f"structure k={k}")
    preprocess_seconds = time.perf_counter() - t0
    # model selection on the validation nodes only (the first candidate wins ties)
    tuning, candidates = [], []
    for k, betas in grid(cfg):
        res, model = fit_fgl(built[k][0], betas, what=f"fgl k={k} β=({betas[0]:g}, {betas[1]:g})")
        tuning.append({"knn_k": k, "beta1": betas[0], "beta2": betas[1], **res})
        candidates.append(model)
    best = max(range(len(tuning)), key=lambda i: (tuning[i]["val_acc"], -i))
    chosen = candidates[best]
    del candidates
    k, betas = grid(cfg)[best]
    structure, diag = built[k]
    diag = {
        **diag,
        "preprocess_seconds": preprocess_seconds,
        "selected": {"knn_k": k, "beta1": betas[0], "beta2": betas[1]},
    }
    diag["tuning"] = tuning
    results: dict[str, Any] = {
        "fgl": {key: v for key, v in tuning[best].items() if key not in ("knn_k", "beta1", "beta2")}
    }
    if cfg.both_directions:
        other: Direction = "sender" if cfg.tree_message == "receiver" else "receiver"
        results[f"fgl-{other}"] = fit_fgl(structure, betas, tree_message=other, what=f"fgl-{other}")[0]
    if ablate:
        uniform = sample_trees(structure.edge_index, None, n, cfg.num_trees, gen, sampler=cfg.sampler)
        guided = sample_trees(
            structure.edge_index,
            structure.attention,
            n,
            cfg.num_trees,
            gen,
            sampler=cfg.sampler,
            score_floor=cfg.tree_score_floor,
        )
        trees = guided if cfg.tree_sampling == "homophily" else uniform
        # measured on tree edges between nodes whose labels no pre-processing step saw (not training nodes):
        # the estimator's attention is fitted to the training labels, so their edges are homophilous by fit
        unseen = ~g.train_mask
        diag["tree_homophily_guided"] = tree_homophily(guided, g.y, unseen)
        diag["tree_homophily_uniform"] = tree_homophily(uniform, g.y, unseen)
        diag["class_prior_homophily"] = float((torch.bincount(g.y[unseen]).double() / int(unseen.sum())).pow(2).sum())
        # tree edges per tree on which tree_homophily_* is measured (the chance band's sample size)
        diag["tree_edges_unseen"] = float((unseen[guided[:, 0]] & unseen[guided[:, 1]]).sum()) / guided.size(0)
        results["fgl-uniform"] = fit_fgl(structure.with_trees(uniform), betas, what="fgl-uniform")[0]
        results["fgl-single-tree"] = fit_fgl(structure.with_trees(trees[:1]), betas, what="fgl-single-tree")[0]
        results["fgl-no-global"] = fit_fgl(structure, betas, "local", what="fgl-no-global")[0]
        results["fgl-no-local"] = fit_fgl(structure, betas, "global", what="fgl-no-local")[0]
    for name in cfg.compare:
        torch.manual_seed(seed)
        model = make_baseline(name, g.x.size(1), num_classes, **_baseline_kwargs(cfg)).to(device)
        results[name] = fit(model, lambda m=model: m(g.x, g.edge_index), name)
    test_y = g.y[g.test_mask]
    out = {
        "seed": seed,
        "num_classes": num_classes,
        # the chance band's sample: test nodes and the majority class's share among them
        "test_nodes": int(test_y.numel()),
        "test_majority": float(torch.bincount(test_y, minlength=num_classes).max()) / max(int(test_y.numel()), 1),
        "homophily": data.homophily,
        "models": results,
        "diagnostics": diag,
    }
    return out, chosen


def _summary(values: list[float]) -> dict[str, float]:
    return {
        "mean": statistics.fmean(values),
        "std": statistics.stdev(values) if len(values) > 1 else 0.0,
        "n": len(values),
    }


def _tuning(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Validation and test accuracy of every tuned candidate (mean over repeats): what the choice saw."""
    tables = [r["diagnostics"].get("tuning", []) for r in rows]
    if not tables or not all(len(t) == len(tables[0]) for t in tables):
        return []
    out = []
    for i, cand in enumerate(tables[0]):
        out.append(
            {
                "knn_k": cand["knn_k"],
                "beta1": cand["beta1"],
                "beta2": cand["beta2"],
                "val_acc": _summary([t[i]["val_acc"] for t in tables]),
                "test_acc": _summary([t[i]["test_acc"] for t in tables]),
            }
        )
    return out


def _aggregate(cfg: FGLConfig, units: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    graphs = []
    for label, phi in graph_names(cfg):
        rows = units.get(label, [])
        if not rows:
            continue
        methods = sorted({m for r in rows for m in r["models"]})
        entry: dict[str, Any] = {
            "graph": label,
            "phi": phi,
            "homophily": statistics.fmean(r["homophily"] for r in rows),
            "num_classes": rows[0]["num_classes"],
            "test_nodes": [r.get("test_nodes") for r in rows],
            "test_majority": [r.get("test_majority") for r in rows],
            "accuracy": {
                m: {
                    **_summary([r["models"][m]["test_acc"] for r in rows]),
                    "values": [r["models"][m]["test_acc"] for r in rows],
                }
                for m in methods
            },
            "seconds_per_epoch": {
                m: statistics.fmean(r["models"][m]["seconds_per_epoch"] for r in rows) for m in methods
            },
        }
        for key in (
            "homophily_augmented",
            "homophily_trees",
            "homophily_knn",
            "pseudo_test_acc",
            "tree_homophily_guided",
            "tree_homophily_uniform",
            "class_prior_homophily",
            "tree_edges_unseen",
            "preprocess_seconds",
            "attention_on_same_class",
            "attention_on_knn_only",
            "tree_edges_knn_only",
        ):
            vals = [r["diagnostics"][key] for r in rows if key in r["diagnostics"]]
            vals = [v for v in vals if not (isinstance(v, float) and math.isnan(v))]
            if vals:
                entry[key] = _summary(vals)
        entry["pseudo_models"] = [r["diagnostics"]["pseudo_model"] for r in rows]
        entry["selected"] = [r["diagnostics"].get("selected") for r in rows]
        entry["tuning"] = _tuning(rows)
        graphs.append(entry)
    return graphs


def _spread(repeats: int) -> str:
    """What the bands / error bars of the run's figures show (nothing with one repeat)."""
    return f"mean ± std over {repeats} repeats" if repeats > 1 else "one repeat: no band"


def _figures(run: RunDir, graphs: list[dict[str, Any]], ablation_graph: str | None, repeats: int) -> None:
    """Accuracy vs homophily and the ablation bars. Bands and error bars are the std over this run's
    ``repeats`` (the replicated ``--seeds N`` runs are separate runs: their spread is in the claims' report)."""
    if len(graphs) > 1:
        order = sorted(graphs, key=lambda g: g["homophily"])
        xs = [g["homophily"] for g in order]
        main = [m for m in ("fgl", "gcn", "appnp", "gcnii", "mlp", "linear") if all(m in g["accuracy"] for g in order)]
        curves = {m: (xs, [g["accuracy"][m]["mean"] for g in order]) for m in main}
        bands = {
            m: (
                [g["accuracy"][m]["mean"] - g["accuracy"][m]["std"] for g in order],
                [g["accuracy"][m]["mean"] + g["accuracy"][m]["std"] for g in order],
            )
            for m in main
        }
        plot_curves(
            run.figure_path("accuracy_vs_homophily"),
            curves,
            bands=bands if repeats > 1 else None,
            xlabel="edge homophily of the graph",
            ylabel="test accuracy",
            title=f"cSBM: accuracy vs homophily ({_spread(repeats)})",
        )
    abl = next((g for g in graphs if g["graph"] == ablation_graph), None)
    if abl is not None and "fgl-uniform" in abl["accuracy"]:
        names = ["fgl", "fgl-uniform", "fgl-single-tree", "fgl-no-global", "fgl-no-local"]
        names += [b for b in ("gcn", "appnp", "gcnii", "mlp", "linear") if b in abl["accuracy"]]
        plot_bars(
            run.figure_path("ablation"),
            {n: abl["accuracy"][n]["mean"] for n in names},
            errors={n: abl["accuracy"][n]["std"] for n in names} if repeats > 1 else None,
            ylabel="test accuracy",
            title=f"ablation on {abl['graph']} ({_spread(repeats)})",
        )


def model_name(label: str, phi: float | None) -> str:
    """The saved-model name of a graph's FGL: ``fgl-phi-0.50`` for a cSBM, ``fgl-<dataset>`` otherwise."""
    return f"fgl-phi{phi:+.2f}" if phi is not None else f"fgl-{label}"


def run(cfg: FGLConfig, run: RunDir) -> dict[str, Any]:
    """Train and evaluate every (graph, seed) unit; returns the aggregated results (see README).

    The FGL chosen on validation for the first repeat of every graph is saved (``run.save_model``) with its
    structure: ``iclr26_shared.load_model(run_dir, "fgl-phi-0.50")`` gives it back, ready to call on that
    graph's features."""
    with torch_threads(cfg.torch_threads):
        return _run(cfg, run)


def _run(cfg: FGLConfig, run: RunDir) -> dict[str, Any]:
    device = run.device
    plan = [(label, phi, run.seed + s) for label, phi in graph_names(cfg) for s in range(cfg.repeats)]
    ablation_graph = graph_names(cfg)[0][0] if cfg.dataset != "csbm" else f"csbm(phi={cfg.ablation_phi:+.2f})"
    steps = [steps_per_unit(cfg, cfg.ablations and label == ablation_graph) for label, _, _ in plan]
    units: dict[str, list[dict[str, Any]]] = {}
    start = 0
    ckpt = run.load_checkpoint()
    if ckpt is not None:
        start, state = ckpt
        units = state["units"]
    t0 = time.perf_counter()
    with run.progress(sum(steps), "fgl", completed=sum(steps[:start])) as bar:
        for step in range(start + 1, len(plan) + 1):
            label, phi, seed = plan[step - 1]
            ablate = cfg.ablations and label == ablation_graph
            short = label.replace("csbm(phi=", "φ=").rstrip(")")
            res, model = _unit(
                cfg, phi, seed, ablate, device, tick=lambda what, g=short: bar.advance(unit=f"{g} {what}")
            )
            units.setdefault(label, []).append(res)
            accs = {f"acc_{m}": r["test_acc"] for m, r in res["models"].items()}
            run.log(step, graph=label, seed=seed, homophily=res["homophily"], **accs)
            if seed == run.seed:
                run.save_model(
                    model_name(label, phi),
                    model,
                    extra={
                        "graph": label,
                        "seed": seed,
                        "input": "x [n, f]: the node features of the graph its structure was built on",
                        "val_acc": res["models"]["fgl"]["val_acc"],
                        "test_acc": res["models"]["fgl"]["test_acc"],
                    },
                )
            run.save_checkpoint(step, {"units": units})
    graphs = _aggregate(cfg, units)
    _figures(run, graphs, ablation_graph if cfg.ablations else None, cfg.repeats)
    return {
        "dataset": cfg.dataset,
        "ablation_graph": ablation_graph if cfg.ablations else None,
        "repeats": cfg.repeats,
        "graphs": graphs,
        "wall_seconds": time.perf_counter() - t0,
        "torch_threads": torch.get_num_threads(),
    }


@keeps_global_rng
def fit(
    data: Data,
    *,
    num_trees: int = 8,
    knn_k: int = 5,
    beta1: float = 0.3,
    beta2: float = 0.5,
    hidden_channels: int = 64,
    k_local: int = 2,
    gamma: float = 0.3,
    dropout: float = 0.5,
    lr: float = 0.01,
    weight_decay: float = 5e-4,
    epochs: int = 150,
    patience: int = 40,
    pseudo_epochs: int = 200,
    estimator_epochs: int = 200,
    seed: int = 0,
) -> tuple[FGL, dict[str, Any]]:
    """Train FGL on any ``torch_geometric.data.Data`` with ``x``, ``edge_index``, ``y`` and boolean
    ``train_mask`` / ``val_mask`` (``test_mask`` optional): the pre-processing (:func:`build_structure`),
    then full-batch Adam with the weights of the best validation epoch kept.

    Returns ``(model, info)``: the trained :class:`FGL` with its structure set (``model(data.x)`` gives
    logits ``[n, C]``; ``model.save_pretrained(dir)`` keeps weights and trees) and ``info`` with
    ``val_acc``, ``test_acc`` (0 without a test mask), ``best_epoch`` and the pre-processing diagnostics.
    """
    from iclr26_graphs.errors import GraphInputError

    for key in ("x", "edge_index", "y", "train_mask", "val_mask"):
        if getattr(data, key, None) is None:
            raise GraphInputError(f"fit: data has no {key!r} (expected x, edge_index, y, train_mask, val_mask)")
    x, edge_index, y = (cast(torch.Tensor, data[k]) for k in ("x", "edge_index", "y"))
    train_mask, val_mask = cast(torch.Tensor, data.train_mask), cast(torch.Tensor, data.val_mask)
    device = x.device
    test_mask = getattr(data, "test_mask", None)
    if test_mask is None:
        test_mask = torch.zeros_like(train_mask)
    gen = torch.Generator(device=device).manual_seed(seed)
    torch.manual_seed(seed)
    structure, diag = build_structure(
        x,
        edge_index,
        y,
        train_mask,
        val_mask,
        num_trees=num_trees,
        knn_k=knn_k,
        pseudo_epochs=pseudo_epochs,
        estimator_epochs=estimator_epochs,
        lr=lr,
        weight_decay=weight_decay,
        generator=gen,
    )
    torch.manual_seed(seed)
    model = FGL(
        x.size(1),
        int(y.max()) + 1,
        hidden_channels=hidden_channels,
        num_trees=num_trees,
        beta1=beta1,
        beta2=beta2,
        k_local=k_local,
        gamma=gamma,
        dropout=dropout,
    ).to(device)
    model.set_structure(structure)
    res = train_node_classifier(
        model,
        lambda: model(x),
        y,
        train_mask,
        val_mask,
        test_mask,
        epochs=epochs,
        lr=lr,
        weight_decay=weight_decay,
        patience=patience,
    )
    return model, {**res, **diag}


def dry_run(cfg: FGLConfig, device: torch.device) -> dict[str, Any]:
    """The preset's first graph at its real size, FGL (and its structure) at the preset's sizes, one Adam
    step on 2 training nodes and one evaluation; also the largest baseline's parameter count."""
    label, phi = graph_names(cfg)[0]
    data = _load(cfg, phi, 0, device)
    g = graph_tensors(data)
    num_classes = int(g.y.max()) + 1
    structure, _ = build_structure(
        g.x,
        g.edge_index,
        g.y,
        g.train_mask,
        g.val_mask,
        num_trees=cfg.num_trees,
        knn_k=max(cfg.tune_knn_k or (cfg.knn_k,)),
        pseudo_epochs=1,
        estimator_epochs=1,
        estimator_channels=cfg.estimator_channels,
        sampler=cfg.sampler,
        score_floor=cfg.tree_score_floor,
        generator=torch.Generator(device=device).manual_seed(0),
    )
    model = _fgl(cfg, g.x.size(1), num_classes, (cfg.beta1, cfg.beta2)).to(device).set_structure(structure)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    idx = g.train_mask.nonzero().flatten()[:2]
    model.train()
    loss = F.cross_entropy(model(g.x)[idx], g.y[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
    model.eval()
    with torch.no_grad():
        ev = float(F.cross_entropy(model(g.x)[idx], g.y[idx]))
    kw = _baseline_kwargs(cfg)
    baselines = {
        b: sum(p.numel() for p in make_baseline(b, g.x.size(1), num_classes, **kw).parameters()) for b in cfg.compare
    }
    return {
        "parameters": sum(p.numel() for p in model.parameters() if p.requires_grad),
        "train_loss": float(loss.detach()),
        "eval_loss": ev,
        "graph": label,
        "nodes": int(g.x.size(0)),
        "augmented_arcs": int(structure.edge_index.size(1)),
        "baseline_parameters": baselines,
    }
