"""ProteinTTT: test-time training of protein language models on one protein (arXiv 2411.02109).

Public API::

    from iclr26_science.proteins import load_adapter, load_antiberty, score_mutants, ttt
    adapted = ttt(wild_type, load_antiberty())          # customise the model to this protein (paper recipe)
    scores = score_mutants(adapted.lm, wild_type, ["E1A", "V2K:Q3R"])   # masked-marginal fitness scores
    adapted.save_adapter("adapter/")                    # LoRA runs: the adapter only (PEFT's layout)
    adapted.reset()                                     # θ₀ again, bit for bit
    reloaded = load_adapter(load_antiberty(), "adapter/")   # the adapted model again

Needs the ``proteins`` extra (fair-esm, transformers, antiberty); without it, importing this package
raises :class:`~iclr26_science._extras.MissingExtraError` naming the extra. ``transformers`` and ``esm``
themselves are imported only by the model loaders.
"""

# ruff: noqa: E402  (the extra is checked before the subpackages import its libraries)
from iclr26_science._extras import require

require("proteins", __name__)

from iclr26_science.proteins.data import ProteinRecord, antibody_sequences, esm_readme_proteins, readme_sequences
from iclr26_science.proteins.lm import (
    ESM2_MODELS,
    MaskedLM,
    antiberty_alphabet,
    as_masked_lm,
    bert_from_config,
    esm2_from_config,
    load_antiberty,
    load_esm2,
    load_esm_checkpoint,
)
from iclr26_science.proteins.lora import (
    LoRALinear,
    inject_lora,
    load_adapter,
    lora_parameters,
    lora_scales,
    remove_lora,
    save_adapter,
)
from iclr26_science.proteins.potts import PottsModel, random_potts, single_mutants
from iclr26_science.proteins.scoring import (
    masked_marginals,
    mutant_scores,
    pseudo_log_likelihood,
    pseudo_perplexity,
    score_mutants,
    spearman,
    wildtype_marginals,
)
from iclr26_science.proteins.tokens import (
    AMINO_ACIDS,
    NONSTANDARD_RESIDUES,
    Mutation,
    ProteinAlphabet,
    apply_mutations,
    check_sequence,
    parse_mutations,
)
from iclr26_science.proteins.ttt import ProteinTTT, TTTResult, TTTSettings, mlm_loss, ttt

__all__ = [
    "AMINO_ACIDS",
    "ESM2_MODELS",
    "NONSTANDARD_RESIDUES",
    "LoRALinear",
    "MaskedLM",
    "Mutation",
    "PottsModel",
    "ProteinAlphabet",
    "ProteinRecord",
    "ProteinTTT",
    "TTTResult",
    "TTTSettings",
    "antibody_sequences",
    "antiberty_alphabet",
    "as_masked_lm",
    "apply_mutations",
    "bert_from_config",
    "check_sequence",
    "esm2_from_config",
    "esm_readme_proteins",
    "inject_lora",
    "load_adapter",
    "load_antiberty",
    "load_esm2",
    "load_esm_checkpoint",
    "lora_parameters",
    "lora_scales",
    "masked_marginals",
    "mlm_loss",
    "mutant_scores",
    "parse_mutations",
    "pseudo_log_likelihood",
    "pseudo_perplexity",
    "random_potts",
    "readme_sequences",
    "remove_lora",
    "save_adapter",
    "score_mutants",
    "single_mutants",
    "spearman",
    "ttt",
    "wildtype_marginals",
]
