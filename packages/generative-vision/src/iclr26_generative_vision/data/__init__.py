"""Data: the Gaussian-mixture toys (closed form); real image sets come from ``iclr26_shared.images``."""
