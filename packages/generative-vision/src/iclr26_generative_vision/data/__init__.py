"""Data: the Gaussian-mixture toys (closed form) and the offline retrieval benchmark (``retrieval``, from
scikit-image's photographs); real image sets come from ``iclr26_shared.images``."""
