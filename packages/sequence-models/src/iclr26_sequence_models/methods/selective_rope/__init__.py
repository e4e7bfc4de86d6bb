"""Selective RoPE (Movahedi et al., ICLR 2026): config, model builder, training and claims."""
