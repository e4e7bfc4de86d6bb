"""Small classifiers with an explicit penultimate-feature map and last linear layer."""

from iclr26_theory_metrics.nn.models import MLP, MODEL_NAMES, VGG9, FeatureClassifier, ResNet9, build_model

__all__ = ["MLP", "MODEL_NAMES", "FeatureClassifier", "ResNet9", "VGG9", "build_model"]
