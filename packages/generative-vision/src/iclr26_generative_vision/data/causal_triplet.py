"""An offline Causal-Triplet-style data set: before/after images of one action on one object, rendered with MuJoCo.

Causal Triplet (Liu et al., CLeaR 2023) pairs two images of a scene, before and after one action (verb) on
one object (noun); the task is to name the action. Its ProcTHOR data (≈165 GB) is not offline, so this
module builds the same kind of pairs from MuJoCo scenes written here as MJCF: a table with one of eight
object classes made of primitives, some with a hinge or slide joint (cabinet, drawer, chest, laptop), some
with an emissive part and a light (lamp, tv, laptop), and a few distractor objects. The seven actions are

* ``open`` / ``close``: ``open`` takes a shut object (openness 0–0.1) to wide open (0.7–0.95, ProcTHOR's
  openness ≈ 0.8); ``close`` shuts (to 0–0.05) an object left ajar (0.3–0.6);
* ``turn-on`` / ``turn-off``: ``turn-on`` lights a dark part to a dim glow (level 0.35–0.6, a lamp
  warming up), ``turn-off`` darkens a fully lit one (0.8–1.0) to 0;
* ``move-left`` / ``move-right``: the object slides sideways along the table (left/right of the camera),
  the camera aimed at where it stood *before*, and it turns a little (yaw ± 0.25 rad) as it slides;
* ``recolour``: the object's main colour changes hue.

Antonyms are **not mirror images** (generator version 3): swapping the before and after images of an
action never gives a sample its antonym can draw (the supports of (before, after) states are disjoint:
a swapped ``close`` opens only to 0.3–0.6, a swapped ``turn-off`` lights to 0.8–1.0, a swapped move starts
off-centre). With mirrored antonyms (version 2: (lo, hi) ↔ (hi, lo), on/off swapped, the camera at the
move's midpoint) every held-out compositional pair was distributed like a swapped training pair of its
antonym on the same noun, which CDE's antisymmetric δ = φ(x̃) − φ(x) reads exactly (issue 36).

Antonym pairs (as the benchmark's ``(close, open), (turnon, turnoff)``): ``ANTONYMS``. Every sample draws
its own camera (azimuth, elevation, distance, a target near the object: Causal Triplet's single-object
setting crops to the object's box), key light, table and floor colours, object
position, yaw, colour and untouched state, and 0…``max_distractors`` distractors, from
``numpy.random.default_rng([seed, index])``: a sample depends only on ``(seed, index)`` and is the same
in every run and in any order. ``render_pairs`` returns ``uint8`` images ``[N, 2, S, S, 3]`` (before,
after).

The splits follow ``causaltriplet/dataset.split_df``:

* compositional (``comp``): shuffle the (verb, noun) pairs; a fraction become OOD candidates; a candidate
  is held out only if its verb has an antonym and its verb, its noun, and the antonym verb on the same
  noun are IID (so ``recolour`` pairs always stay IID);
* systematic (``noun``): sort the noun classes by sample count and hold out the middle ones
  (``max(int(0.4 · C), 2)`` rounded down to even, as the code's slice does).

The IID samples are split again into IID train and IID test; OOD samples are test-only.

Rendering is offscreen through ``mujoco.Renderer`` with ``MUJOCO_GL=egl`` (set here when unset); if EGL
cannot start, OSMesa is tried, and if that fails too a :class:`~iclr26_shared.errors.DataError` says what
to install.
"""

from __future__ import annotations

import colorsys
import importlib
import importlib.util
import io
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from iclr26_shared.config import stable_hash
from iclr26_shared.errors import DataError
from iclr26_shared.io import atomic_write_bytes

__all__ = [
    "ANTONYMS",
    "NOUNS",
    "NOUN_VERBS",
    "VERBS",
    "CausalTripletSet",
    "Split",
    "TripletRenderer",
    "MUJOCO_VOCAB",
    "Vocabulary",
    "antonym_index",
    "compositional_split",
    "load_or_render",
    "make_split",
    "render_pairs",
    "systematic_split",
    "valid_pairs",
]

#: Version of the scene and the sampling rules; part of the cache key (bump it when either changes).
GENERATOR_VERSION = 3

VERBS: tuple[str, ...] = ("open", "close", "turn-on", "turn-off", "move-left", "move-right", "recolour")
NOUNS: tuple[str, ...] = ("cabinet", "drawer", "chest", "laptop", "lamp", "tv", "cup", "ball")
#: Antonym verb pairs (δ of one should be anti-parallel to δ of the other).
ANTONYMS: tuple[tuple[str, str], ...] = (("open", "close"), ("turn-on", "turn-off"), ("move-left", "move-right"))


@dataclass(frozen=True)
class Vocabulary:
    """Action and object names of a data set and its antonym verb pairs (ids index these tuples)."""

    verbs: tuple[str, ...]
    nouns: tuple[str, ...]
    antonyms: tuple[tuple[str, str], ...] = ()

    def antonym(self, verb: int) -> int | None:
        """The verb id of ``verb``'s antonym, or None."""
        name = self.verbs[verb]
        for a, b in self.antonyms:
            if name == a and b in self.verbs:
                return self.verbs.index(b)
            if name == b and a in self.verbs:
                return self.verbs.index(a)
        return None

    def antonym_ids(self) -> list[tuple[int, int]]:
        """``(i, j)`` verb ids of the antonym pairs present in ``verbs``."""
        return [
            (self.verbs.index(a), self.verbs.index(b)) for a, b in self.antonyms if a in self.verbs and b in self.verbs
        ]


#: The rendered MuJoCo data set's vocabulary.
MUJOCO_VOCAB = Vocabulary(VERBS, NOUNS, ANTONYMS)

_BASE = ("move-left", "move-right", "recolour")
_OPEN = ("open", "close")
_ON = ("turn-on", "turn-off")
#: The verbs each object class affords.
NOUN_VERBS: dict[str, tuple[str, ...]] = {
    "cabinet": _OPEN + _BASE,
    "drawer": _OPEN + _BASE,
    "chest": _OPEN + _BASE,
    "laptop": _OPEN + _ON + _BASE,
    "lamp": _ON + _BASE,
    "tv": _ON + _BASE,
    "cup": _BASE,
    "ball": _BASE,
}

#: Joint of each articulated class, and the joint value at openness 1 (hinge: radians, slide: metres).
_JOINTS: dict[str, tuple[str, float]] = {
    "cabinet": ("cabinet_door", -1.7),
    "drawer": ("drawer_slide", 0.16),
    "chest": ("chest_lid", -1.9),
    "laptop": ("laptop_hinge", -1.95),
}
#: Emissive geom (its material) of each switchable class.
_EMISSIVE: dict[str, str] = {"laptop": "laptop_display", "lamp": "lamp_shade", "tv": "tv_screen"}
#: Geoms that carry an object's main colour.
_MAIN_GEOMS: dict[str, tuple[str, ...]] = {
    "cabinet": ("cabinet_body", "cabinet_door_g"),
    "drawer": ("drawer_body", "drawer_front"),
    "chest": ("chest_body", "chest_lid_g"),
    "laptop": ("laptop_base", "laptop_screen"),
    "lamp": ("lamp_base", "lamp_pole"),
    "tv": ("tv_frame", "tv_stand"),
    "cup": ("cup_body", "cup_handle"),
    "ball": ("ball_g",),
}
_DISTRACTORS = ("d_box", "d_sphere", "d_cyl")
_TABLE_Z = 0.42  # table top height
_AWAY = 40.0  # inactive objects are parked this far away (out of every camera's view)

_SCENE = f"""
<mujoco model="causal_triplet">
  <visual><quality shadowsize="0"/><headlight ambient="0.25 0.25 0.25" diffuse="0.35 0.35 0.35"/></visual>
  <asset>
    <material name="laptop_display" rgba="0.05 0.05 0.05 1"/>
    <material name="lamp_shade" rgba="0.5 0.5 0.5 1"/>
    <material name="tv_screen" rgba="0.05 0.05 0.05 1"/>
  </asset>
  <worldbody>
    <light name="key" pos="0 -1 2.5" dir="0 0.4 -1" diffuse="0.6 0.6 0.6" directional="false"/>
    <geom name="floor" type="plane" size="4 4 0.1" rgba="0.45 0.42 0.38 1"/>
    <body name="table" pos="0 0 0">
      <geom name="table_top" type="box" pos="0 0 {_TABLE_Z - 0.02}" size="0.5 0.32 0.02" rgba="0.55 0.4 0.25 1"/>
      <geom name="leg1" type="box" pos="0.45 0.27 0.2" size="0.03 0.03 0.2" rgba="0.3 0.22 0.15 1"/>
      <geom name="leg2" type="box" pos="-0.45 0.27 0.2" size="0.03 0.03 0.2" rgba="0.3 0.22 0.15 1"/>
      <geom name="leg3" type="box" pos="0.45 -0.27 0.2" size="0.03 0.03 0.2" rgba="0.3 0.22 0.15 1"/>
      <geom name="leg4" type="box" pos="-0.45 -0.27 0.2" size="0.03 0.03 0.2" rgba="0.3 0.22 0.15 1"/>
    </body>
    <body name="cabinet" pos="{_AWAY} 0 {_TABLE_Z}">
      <geom name="cabinet_body" type="box" pos="0 0 0.15" size="0.1 0.09 0.15"/>
      <geom name="cabinet_inside" type="box" pos="0 -0.089 0.15" size="0.085 0.002 0.135" rgba="0.12 0.1 0.08 1"/>
      <body name="cabinet_door_b" pos="-0.1 -0.09 0">
        <joint name="cabinet_door" type="hinge" axis="0 0 1" range="-1.8 0" limited="true"/>
        <geom name="cabinet_door_g" type="box" pos="0.1 -0.01 0.15" size="0.1 0.01 0.145"/>
        <geom name="cabinet_knob" type="sphere" pos="0.17 -0.03 0.16" size="0.015" rgba="0.9 0.85 0.6 1"/>
      </body>
    </body>
    <body name="drawer" pos="{_AWAY} 0 {_TABLE_Z}">
      <geom name="drawer_body" type="box" pos="0 0 0.08" size="0.13 0.1 0.08"/>
      <body name="drawer_box" pos="0 0 0">
        <joint name="drawer_slide" type="slide" axis="0 -1 0" range="0 0.18" limited="true"/>
        <geom name="drawer_front" type="box" pos="0 -0.105 0.08" size="0.12 0.01 0.065"/>
        <geom name="drawer_tray" type="box" pos="0 -0.02 0.04" size="0.11 0.08 0.025" rgba="0.85 0.8 0.7 1"/>
        <geom name="drawer_handle" type="box" pos="0 -0.125 0.09" size="0.05 0.012 0.012" rgba="0.2 0.2 0.2 1"/>
      </body>
    </body>
    <body name="chest" pos="{_AWAY} 0 {_TABLE_Z}">
      <geom name="chest_body" type="box" pos="0 0 0.06" size="0.13 0.09 0.06"/>
      <body name="chest_lid_b" pos="0 0.09 0.12">
        <joint name="chest_lid" type="hinge" axis="1 0 0" range="-2 0" limited="true"/>
        <geom name="chest_lid_g" type="box" pos="0 -0.09 0.012" size="0.135 0.09 0.012"/>
      </body>
    </body>
    <body name="laptop" pos="{_AWAY} 0 {_TABLE_Z}">
      <geom name="laptop_base" type="box" pos="0 0 0.01" size="0.13 0.09 0.01"/>
      <geom name="laptop_keys" type="box" pos="0 -0.01 0.021" size="0.11 0.05 0.002" rgba="0.15 0.15 0.15 1"/>
      <body name="laptop_lid" pos="0 0.09 0.02">
        <joint name="laptop_hinge" type="hinge" axis="1 0 0" range="-2 0" limited="true"/>
        <geom name="laptop_screen" type="box" pos="0 -0.09 0.008" size="0.13 0.09 0.006"/>
        <geom name="laptop_display_g" type="box" pos="0 -0.09 0.001" size="0.115 0.078 0.0015"
              material="laptop_display"/>
      </body>
    </body>
    <body name="lamp" pos="{_AWAY} 0 {_TABLE_Z}">
      <geom name="lamp_base" type="cylinder" pos="0 0 0.01" size="0.07 0.01"/>
      <geom name="lamp_pole" type="cylinder" pos="0 0 0.12" size="0.01 0.11"/>
      <geom name="lamp_shade_g" type="sphere" pos="0 0 0.25" size="0.065" material="lamp_shade"/>
      <light name="lamp_light" pos="0 -0.05 0.3" dir="0 0 -1" diffuse="1 0.9 0.6" attenuation="0.5 0.5 0.5"
             active="false" castshadow="false"/>
    </body>
    <body name="tv" pos="{_AWAY} 0 {_TABLE_Z}">
      <geom name="tv_stand" type="box" pos="0 0 0.015" size="0.06 0.04 0.015"/>
      <geom name="tv_frame" type="box" pos="0 0 0.15" size="0.17 0.02 0.11"/>
      <geom name="tv_screen_g" type="box" pos="0 -0.021 0.15" size="0.155 0.002 0.095" material="tv_screen"/>
    </body>
    <body name="cup" pos="{_AWAY} 0 {_TABLE_Z}">
      <geom name="cup_body" type="cylinder" pos="0 0 0.06" size="0.055 0.06"/>
      <geom name="cup_handle" type="box" pos="0.07 0 0.065" size="0.018 0.01 0.035"/>
    </body>
    <body name="ball" pos="{_AWAY} 0 {_TABLE_Z}">
      <geom name="ball_g" type="sphere" pos="0 0 0.07" size="0.07"/>
    </body>
    <body name="d_box" pos="{_AWAY} 0 {_TABLE_Z}">
      <geom name="d_box_g" type="box" pos="0 0 0.04" size="0.04 0.04 0.04"/>
    </body>
    <body name="d_sphere" pos="{_AWAY} 0 {_TABLE_Z}">
      <geom name="d_sphere_g" type="sphere" pos="0 0 0.035" size="0.035"/>
    </body>
    <body name="d_cyl" pos="{_AWAY} 0 {_TABLE_Z}">
      <geom name="d_cyl_g" type="cylinder" pos="0 0 0.05" size="0.03 0.05"/>
    </body>
  </worldbody>
</mujoco>
"""


def valid_pairs() -> list[tuple[int, int]]:
    """All (verb id, noun id) pairs an object affords, in ``NOUNS``/``VERBS`` order."""
    return [(VERBS.index(v), n) for n, noun in enumerate(NOUNS) for v in NOUN_VERBS[noun]]


def antonym_index(verb: int) -> int | None:
    """The verb id of ``verb``'s antonym, or None (``recolour`` has none)."""
    return MUJOCO_VOCAB.antonym(verb)


# ----------------------------------------------------------------------------------------------------
# sampling
# ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Sample:
    """The scene parameters of one pair (everything the renderer needs)."""

    verb: int
    noun: int
    pos: tuple[float, float]  # object position on the table (before)
    yaw: float
    hue: float  # main colour (before), HSV hue
    sat_val: tuple[float, float]
    openness: tuple[float, float]  # before, after (articulated classes)
    glow: tuple[float, float]  # emission level before, after (switchable classes; 0 = off)
    shift: float  # sideways move (after − before), metres, signed
    turn: float  # yaw change of a moved object (after − before), radians
    new_hue: float
    camera: tuple[float, float, float, float, float, float]  # azimuth, elevation, distance, lookat x, y, z
    light: tuple[float, float, float, float]  # key light x, y, z, intensity
    table_rgb: tuple[float, float, float]
    floor_rgb: tuple[float, float, float]
    distractors: tuple[tuple[float, float, float, float, float], ...]  # per distractor kind: on?, x, y, hue, val


def _hsv(h: float, s: float, v: float) -> tuple[float, float, float]:
    return colorsys.hsv_to_rgb(h % 1.0, s, v)


def draw_sample(seed: int, index: int, verb: int, noun: int, max_distractors: int) -> _Sample:
    """The scene of pair ``index`` (a function of ``(seed, index)`` and the action only)."""
    rng = np.random.default_rng([seed, index, GENERATOR_VERSION])
    name = VERBS[verb]
    x, y = float(rng.uniform(-0.22, 0.22)), float(rng.uniform(-0.08, 0.06))
    shift, turn = 0.0, 0.0
    if name in ("move-left", "move-right"):
        mag = float(rng.uniform(0.13, 0.2))
        shift = -mag if name == "move-left" else mag
        turn = float(rng.uniform(-0.25, 0.25))
        x = float(np.clip(x, -0.3 + max(0.0, -shift), 0.3 - max(0.0, shift)))
    # Asymmetric antonyms (no swap of one is a sample of the other): open = shut -> wide open, close = ajar
    # -> shut; turn-on = dark -> dim, turn-off = bright -> dark.
    o_shut, o_wide = float(rng.uniform(0.0, 0.1)), float(rng.uniform(0.7, 0.95))
    if name == "open":
        openness = (o_shut, o_wide)
    elif name == "close":
        openness = (float(rng.uniform(0.3, 0.6)), float(rng.uniform(0.0, 0.05)))
    else:
        o = float(rng.choice([o_shut, o_wide]))
        openness = (o, o)
    g0 = float(rng.uniform(0.35, 1.0)) if rng.integers(2) else 0.0
    if name == "turn-on":
        glow = (0.0, float(rng.uniform(0.35, 0.6)))
    elif name == "turn-off":
        glow = (float(rng.uniform(0.8, 1.0)), 0.0)
    else:
        glow = (g0, g0)
    if NOUNS[noun] == "laptop" and name in ("turn-on", "turn-off"):
        openness = (o_wide, o_wide)  # a laptop's display is seen only when it is open
    hue = float(rng.uniform())
    new_hue = (hue + float(rng.uniform(0.25, 0.75))) % 1.0 if name == "recolour" else hue
    sat_val = (float(rng.uniform(0.55, 0.95)), float(rng.uniform(0.55, 0.95)))
    camera = (  # aimed at the object, close: the single-object setting's crop to its box
        float(rng.uniform(65, 115)),
        float(rng.uniform(-40, -22)),
        float(rng.uniform(0.6, 0.8)),
        float(x + rng.uniform(-0.03, 0.03)),  # where the object stands before the action
        float(y + rng.uniform(-0.03, 0.03)),
        float(_TABLE_Z + rng.uniform(0.06, 0.12)),
    )
    light = (
        float(rng.uniform(-1, 1)),
        float(rng.uniform(-1.5, -0.5)),
        float(rng.uniform(1.8, 3)),
        float(rng.uniform(0.4, 0.8)),
    )
    tv = float(rng.uniform(0.3, 0.7))
    table_rgb = _hsv(float(rng.uniform(0.05, 0.12)), float(rng.uniform(0.3, 0.6)), tv)
    floor_rgb = _hsv(float(rng.uniform()), float(rng.uniform(0.0, 0.3)), float(rng.uniform(0.3, 0.7)))
    count = int(rng.integers(max_distractors + 1))
    chosen = set(rng.permutation(len(_DISTRACTORS))[:count].tolist()) if count else set()
    distractors: list[tuple[float, float, float, float, float]] = []
    for k in range(len(_DISTRACTORS)):
        side = -1.0 if x > 0 else 1.0  # keep distractors on the other half of the table, behind the object
        dx = float(side * rng.uniform(0.22, 0.42))
        dy = float(rng.uniform(0.08, 0.25))
        distractors.append((float(k in chosen), dx, dy, float(rng.uniform()), float(rng.uniform(0.4, 0.9))))
    return _Sample(
        verb=verb,
        noun=noun,
        pos=(x, y),
        yaw=float(rng.uniform(-0.35, 0.35)),
        hue=hue,
        sat_val=sat_val,
        openness=openness,
        glow=glow,
        shift=shift,
        turn=turn,
        new_hue=new_hue,
        camera=camera,
        light=light,
        table_rgb=table_rgb,
        floor_rgb=floor_rgb,
        distractors=tuple(distractors),
    )


# ----------------------------------------------------------------------------------------------------
# rendering
# ----------------------------------------------------------------------------------------------------


def _preload_triton() -> None:
    """Load triton's bundled LLVM before Mesa's (EGL/llvmpipe): the other order segfaults when torch later
    imports triton (e.g. on creating an optimizer)."""
    if importlib.util.find_spec("triton") is None:
        return
    try:
        importlib.import_module("triton")
    except Exception:  # noqa: BLE001, S110 - a broken triton only matters to torch.compile, not here
        pass


def _import_mujoco() -> Any:
    os.environ.setdefault("MUJOCO_GL", "egl")
    _preload_triton()
    try:
        import mujoco
    except ImportError as err:  # pragma: no cover - mujoco is a declared dependency
        raise DataError(
            f"causal triplet renderer: cannot import mujoco ({err}); install iclr26-generative-vision"
        ) from err
    return mujoco


def _open_renderer(mujoco: Any, model: Any, size: int) -> Any:
    """``mujoco.Renderer`` with the current backend (EGL by default), else OSMesa, else one clear error."""
    try:
        return mujoco.Renderer(model, size, size)
    except Exception as first:  # noqa: BLE001 - any backend failure falls through to OSMesa
        try:
            os.environ["PYOPENGL_PLATFORM"] = "osmesa"
            from mujoco import osmesa  # pyright: ignore[reportAttributeAccessIssue]
            from mujoco.rendering.classic import gl_context  # pyright: ignore[reportMissingImports]

            gl_context.GLContext = osmesa.GLContext
            return mujoco.Renderer(model, size, size)
        except Exception as second:  # noqa: BLE001
            raise DataError(
                f"causal triplet renderer: MuJoCo cannot render offscreen with MUJOCO_GL="
                f"{os.environ.get('MUJOCO_GL')!r} ({first}) nor with OSMesa ({second}); install the Debian packages "
                "libegl1 libegl-mesa0 libgl1-mesa-dri (EGL) or libosmesa6 (OSMesa)"
            ) from second


class TripletRenderer:
    """Renders :class:`_Sample` scenes (one compiled MuJoCo model and one offscreen context, reused).

    Args:
        size: Image side S (the images are S × S RGB, uint8).
    """

    def __init__(self, size: int) -> None:
        mujoco = _import_mujoco()
        self._mj = mujoco
        self.size = size
        self.model = mujoco.MjModel.from_xml_string(_SCENE)
        self.model.vis.global_.offwidth = max(size, 64)
        self.model.vis.global_.offheight = max(size, 64)
        self.data = mujoco.MjData(self.model)
        self.renderer = _open_renderer(mujoco, self.model, size)
        self.camera = mujoco.MjvCamera()
        m = self.model
        obj = mujoco.mjtObj
        self._body = {n: mujoco.mj_name2id(m, obj.mjOBJ_BODY, n) for n in (*NOUNS, *_DISTRACTORS)}
        self._geom = {
            n: mujoco.mj_name2id(m, obj.mjOBJ_GEOM, n)
            for n in ("floor", "table_top", *(g for gs in _MAIN_GEOMS.values() for g in gs))
        }
        self._dgeom = {d: mujoco.mj_name2id(m, obj.mjOBJ_GEOM, f"{d}_g") for d in _DISTRACTORS}
        self._mat = {n: mujoco.mj_name2id(m, obj.mjOBJ_MATERIAL, mat) for n, mat in _EMISSIVE.items()}
        self._qadr = {n: int(m.jnt_qposadr[mujoco.mj_name2id(m, obj.mjOBJ_JOINT, j)]) for n, (j, _) in _JOINTS.items()}
        self._lamp_light = mujoco.mj_name2id(m, obj.mjOBJ_LIGHT, "lamp_light")
        self._key = mujoco.mj_name2id(m, obj.mjOBJ_LIGHT, "key")
        self._home = m.body_pos.copy()
        self._home_quat = m.body_quat.copy()

    def close(self) -> None:
        """Free the offscreen context."""
        self.renderer.close()

    def __enter__(self) -> TripletRenderer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _set_state(self, s: _Sample, after: bool) -> None:
        m, d = self.model, self.data
        m.body_pos[:] = self._home
        m.body_quat[:] = self._home_quat
        noun = NOUNS[s.noun]
        x = s.pos[0] + (s.shift if after else 0.0)
        b = self._body[noun]
        m.body_pos[b] = (x, s.pos[1], _TABLE_Z)
        yaw = s.yaw + (s.turn if after else 0.0)
        m.body_quat[b] = (np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2))
        hue = s.new_hue if after else s.hue
        rgb = _hsv(hue, *s.sat_val)
        for g in _MAIN_GEOMS[noun]:
            m.geom_rgba[self._geom[g]] = (*rgb, 1.0)
        d.qpos[:] = 0.0
        if noun in _JOINTS:
            d.qpos[self._qadr[noun]] = (s.openness[1] if after else s.openness[0]) * _JOINTS[noun][1]
        g = s.glow[1] if after else s.glow[0]
        for n, mid in self._mat.items():
            off = np.array((0.55, 0.55, 0.5) if n == "lamp" else (0.04, 0.04, 0.05))
            lit = np.array((1.0, 0.95, 0.7) if n == "lamp" else (0.55, 0.8, 1.0))
            level = g if n == noun else 0.0
            m.mat_rgba[mid] = (*((1 - level) * off + level * lit), 1.0)
            m.mat_emission[mid] = level
        m.light_active[self._lamp_light] = bool(noun == "lamp" and g > 0)
        m.light_diffuse[self._lamp_light] = (g, 0.9 * g, 0.6 * g)
        for k, dname in enumerate(_DISTRACTORS):
            visible, dx, dy, dh, dv = s.distractors[k]
            if visible:
                m.body_pos[self._body[dname]] = (dx, dy, _TABLE_Z)
                m.geom_rgba[self._dgeom[dname]] = (*_hsv(dh, 0.6, dv), 1.0)
        lx, ly, lz, li = s.light
        m.light_pos[self._key] = (lx, ly, lz)
        direction = -np.array([lx, ly, lz - _TABLE_Z])
        m.light_dir[self._key] = direction / np.linalg.norm(direction)
        m.light_diffuse[self._key] = (li, li, li)
        m.geom_rgba[self._geom["table_top"]] = (*s.table_rgb, 1.0)
        m.geom_rgba[self._geom["floor"]] = (*s.floor_rgb, 1.0)
        self._mj.mj_forward(m, d)

    def render(self, s: _Sample) -> np.ndarray:
        """Before and after images of one sample, ``uint8 [2, S, S, 3]``."""
        az, el, dist, lx, ly, lz = s.camera
        cam = self.camera
        cam.azimuth, cam.elevation, cam.distance = az, el, dist
        cam.lookat[:] = (lx, ly, lz)
        out = np.empty((2, self.size, self.size, 3), np.uint8)
        for i, after in enumerate((False, True)):
            self._set_state(s, after)
            self.renderer.update_scene(self.data, camera=cam)
            out[i] = self.renderer.render()
        return out


def _pair_schedule(num_pairs: int, seed: int) -> np.ndarray:
    """(verb, noun) of every sample: the valid pairs in equal numbers (cycled), in a seeded order."""
    pairs = np.asarray(valid_pairs(), dtype=np.int64)
    reps = -(-num_pairs // len(pairs))
    sched = np.tile(pairs, (reps, 1))[:num_pairs]
    return sched[np.random.default_rng([seed, 7]).permutation(num_pairs)]


def render_pairs(
    num_pairs: int, *, size: int, seed: int, max_distractors: int = 3, indices: Sequence[int] | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Render the pool: ``images uint8 [N, 2, S, S, 3]`` (before, after), ``verbs int64 [N]``, ``nouns int64 [N]``.

    ``indices`` renders only those samples of the ``num_pairs`` pool (the same images as in the full pool).
    """
    sched = _pair_schedule(num_pairs, seed)
    idx = list(range(num_pairs)) if indices is None else [int(i) for i in indices]
    images = np.empty((len(idx), 2, size, size, 3), np.uint8)
    with TripletRenderer(size) as r:
        for j, i in enumerate(idx):
            images[j] = r.render(draw_sample(seed, i, int(sched[i, 0]), int(sched[i, 1]), max_distractors))
    return images, sched[idx, 0].copy(), sched[idx, 1].copy()


# ----------------------------------------------------------------------------------------------------
# splits
# ----------------------------------------------------------------------------------------------------


def compositional_split(
    pairs: Sequence[tuple[int, int]], fraction: float, seed: int, vocab: Vocabulary = MUJOCO_VOCAB
) -> set[tuple[int, int]]:
    """Held-out (verb, noun) pairs as ``causaltriplet/dataset.split_df(df, 'comp')``.

    Shuffle the pairs; the first ``int(fraction · P)`` are candidates, the rest start the IID set. In
    order, a candidate is held out only if its verb has an antonym, the verb and the noun occur in the IID
    set, and the antonym verb on the same noun is an IID pair; otherwise it joins the IID set.
    """
    pairs = list(dict.fromkeys(pairs))
    order = [pairs[int(k)] for k in np.random.default_rng([seed, 11]).permutation(len(pairs))]
    n_cand = int(len(pairs) * fraction)
    iid = set(order[n_cand:])
    iid_verbs, iid_nouns = {v for v, _ in iid}, {n for _, n in iid}
    ood: set[tuple[int, int]] = set()
    for v, n in order[:n_cand]:
        ant = vocab.antonym(v)
        if ant is not None and v in iid_verbs and n in iid_nouns and (ant, n) in iid:
            ood.add((v, n))
        else:
            iid.add((v, n))
            iid_verbs.add(v)
            iid_nouns.add(n)
    return ood


def systematic_split(nouns: np.ndarray, fraction: float, num_nouns: int = len(NOUNS)) -> set[int]:
    """Held-out noun classes as ``split_df(df, 'noun')``: sort the classes by count (descending, ties by
    id), ``k = max(int(fraction · C), 2)`` and hold out ``sorted[C//2 − k//2 : C//2 + k//2]`` (the middle)."""
    counts = np.bincount(nouns, minlength=num_nouns)
    ranked = sorted((n for n in range(len(counts)) if counts[n] > 0), key=lambda n: -int(counts[n]))
    c = len(ranked)
    k = max(int(c * fraction), 2)
    return set(ranked[c // 2 - k // 2 : c // 2 + k // 2])


@dataclass(frozen=True)
class Split:
    """Index sets of one OOD split over the pool (IID train and IID test are disjoint; OOD is test-only)."""

    kind: Literal["comp", "noun"]
    train: np.ndarray
    iid_test: np.ndarray
    ood_test: np.ndarray
    held_out: tuple[tuple[int, int], ...] | tuple[int, ...]
    """Held-out (verb, noun) pairs (comp) or noun ids (noun)."""
    vocab: Vocabulary = MUJOCO_VOCAB
    """Names of the ids."""

    def describe(self) -> dict[str, Any]:
        """Sizes and held-out names (for results.json)."""
        verbs, nouns = self.vocab.verbs, self.vocab.nouns
        if self.kind == "comp":
            held = [f"{verbs[v]}-{nouns[n]}" for v, n in self.held_out]  # pyright: ignore[reportGeneralTypeIssues]
        else:
            held = [nouns[int(n)] for n in self.held_out]  # pyright: ignore[reportArgumentType]
        return {
            "train": len(self.train),
            "iid_test": len(self.iid_test),
            "ood_test": len(self.ood_test),
            "held_out": held,
        }


def make_split(
    kind: Literal["comp", "noun"],
    verbs: np.ndarray,
    nouns: np.ndarray,
    *,
    ood_fraction: float,
    iid_test_fraction: float,
    seed: int,
    vocab: Vocabulary = MUJOCO_VOCAB,
) -> Split:
    """The IID train / IID test / OOD test indices of ``kind`` over a pool with labels ``verbs``, ``nouns``."""
    if kind == "comp":
        held = compositional_split(
            sorted({(int(v), int(n)) for v, n in zip(verbs, nouns, strict=True)}), ood_fraction, seed, vocab
        )
        is_ood = np.array([(int(v), int(n)) in held for v, n in zip(verbs, nouns, strict=True)], dtype=bool)
        held_out: Any = tuple(sorted(held))
    else:
        held_n = systematic_split(nouns, ood_fraction, len(vocab.nouns))
        is_ood = np.isin(nouns, sorted(held_n))
        held_out = tuple(sorted(held_n))
    if not is_ood.any():
        raise DataError(f"causal triplet {kind} split: no held-out samples (pool of {len(verbs)} pairs is too small)")
    iid = np.flatnonzero(~is_ood)
    iid = iid[np.random.default_rng([seed, 13 if kind == "comp" else 17]).permutation(len(iid))]
    n_test = max(1, round(iid_test_fraction * len(iid)))
    train, iid_test = np.sort(iid[n_test:]), np.sort(iid[:n_test])
    missing = set(verbs[np.flatnonzero(is_ood)].tolist()) - set(verbs[train].tolist())
    if missing:
        raise DataError(
            f"causal triplet {kind} split: OOD verbs {[vocab.verbs[v] for v in sorted(missing)]} never occur in "
            "training; use more pairs"
        )
    return Split(kind, train, iid_test, np.flatnonzero(is_ood), held_out, vocab)


# ----------------------------------------------------------------------------------------------------
# the data set and its cache
# ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CausalTripletSet:
    """The pool: ``images uint8 [N, 2, S, S, 3]``, ``verbs int64 [N]``, ``nouns int64 [N]`` (ids into ``vocab``)."""

    images: np.ndarray
    verbs: np.ndarray
    nouns: np.ndarray
    vocab: Vocabulary = MUJOCO_VOCAB

    def __len__(self) -> int:
        return len(self.verbs)


def cache_key(num_pairs: int, size: int, seed: int, max_distractors: int) -> str:
    """Hash of everything the pool depends on (the generator version included)."""
    return stable_hash(
        {"v": GENERATOR_VERSION, "n": num_pairs, "size": size, "seed": seed, "distractors": max_distractors}, length=12
    )


def _validate(data: CausalTripletSet, num_pairs: int, size: int, where: str) -> None:
    ok = (
        data.images.dtype == np.uint8
        and data.images.shape == (num_pairs, 2, size, size, 3)
        and data.verbs.shape == (num_pairs,)
        and data.nouns.shape == (num_pairs,)
        and data.verbs.min(initial=0) >= 0
        and data.verbs.max(initial=0) < len(VERBS)
        and data.nouns.min(initial=0) >= 0
        and data.nouns.max(initial=0) < len(NOUNS)
    )
    if not ok:
        raise DataError(
            f"{where}: expected images uint8 {(num_pairs, 2, size, size, 3)} and {num_pairs} verb/noun ids, got "
            f"{data.images.dtype} {data.images.shape}; delete the file to re-render"
        )


def load_or_render(
    num_pairs: int, *, size: int, seed: int, max_distractors: int = 3, cache_dir: str | Path | None = None
) -> tuple[CausalTripletSet, bool]:
    """The pool, read from ``cache_dir/<key>.npz`` when present, else rendered (and written atomically there).

    Returns the set and whether it came from the cache.
    """
    path = (
        Path(cache_dir) / f"causal-triplet-{cache_key(num_pairs, size, seed, max_distractors)}.npz"
        if cache_dir
        else None
    )
    if path is not None and path.is_file():
        try:
            with np.load(path) as z:
                data = CausalTripletSet(z["images"], z["verbs"].astype(np.int64), z["nouns"].astype(np.int64))
        except (OSError, ValueError, KeyError) as err:
            raise DataError(f"{path}: not a causal triplet cache ({err}); delete it to re-render") from err
        _validate(data, num_pairs, size, str(path))
        return data, True
    images, verbs, nouns = render_pairs(num_pairs, size=size, seed=seed, max_distractors=max_distractors)
    data = CausalTripletSet(images, verbs, nouns)
    if path is not None:
        buf = io.BytesIO()
        np.savez_compressed(buf, images=images, verbs=verbs, nouns=nouns)
        atomic_write_bytes(path, buf.getvalue())
    return data, False
