"""Data: the Gaussian-mixture toys (closed form) and the shared real image sets as tensors."""
