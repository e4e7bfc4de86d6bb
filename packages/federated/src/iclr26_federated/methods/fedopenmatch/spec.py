"""The FedOpenMatch :class:`MethodSpec` (light: no torch or flwr import until ``run`` is called)."""

from __future__ import annotations

from iclr26_shared.spec import MethodSpec, Resources

__all__ = ["SPEC"]

SPEC = MethodSpec.from_module(
    "iclr26_federated.methods.fedopenmatch",
    name="fedopenmatch",
    paper="FedOpenMatch: open-set semi-supervised FL in the label-at-server setting (ICLR 2026 submission)",
    summary="FedOpenMatch vs FedAvg+OpenMatch/FixMatch, labeled-only and GS/LA/LCR ablations, as a Flower app",
    # Flower's simulation engine runs the virtual clients on two cores at a time (quick preset)
    resources=Resources(cpus=2.0),
)
