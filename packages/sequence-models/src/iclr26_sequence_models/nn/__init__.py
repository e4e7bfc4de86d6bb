"""Models assembled from the layers."""

from iclr26_sequence_models.nn.model import LAYERS, SequenceModel, SwiGLU

__all__ = ["LAYERS", "SequenceModel", "SwiGLU"]
