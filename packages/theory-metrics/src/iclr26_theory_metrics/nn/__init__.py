"""Small classifiers with an explicit penultimate-feature map and last linear layer."""

from iclr26_theory_metrics.nn.models import MLP, MODEL_NAMES, VGG9, FeatureClassifier, ResNet9, build_model
from iclr26_theory_metrics.nn.transformer import ModularTransformer

__all__ = ["MLP", "MODEL_NAMES", "FeatureClassifier", "ModularTransformer", "ResNet9", "VGG9", "build_model"]
