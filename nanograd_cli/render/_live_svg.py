"""Graphviz's SVG made light for the live page. A browser's time to open a page grows with the
elements in it, and a drawing of 1,000 nodes has about 10,000, so:

- comments, titles and ids go: a node says its name, instruction and kind in attributes;
  the font, size and anchor that every text shares are said once, on the graph;
- every edge's line goes into one path and every arrowhead into another (the page draws the
  current node's edges over them when it steps through the passes);
- the nodes and edge labels are cut into tiles of the picture, kept as text for the page's
  script to insert: the tiles in view before the first picture, the others right after it.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Mapping
from typing import NamedTuple, cast

SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}"
# A tile's side, in the drawing's points: a browser window shows a few of them; the smaller,
# the fewer nodes out of view go in with those in view, and the more tiles.
TILE = 240.0
# Text attributes said once on the graph, in their most common value, where every text has one.
SHARED = ("font-family", "font-size", "text-anchor")
PLAIN_LINE = {"fill": "none", "stroke": "black"}
PLAIN_HEAD = {"fill": "black", "stroke": "black"}
NUMBER = re.compile(r"-?\d+(?:\.\d*)?(?:e-?\d+)?")


class Node(NamedTuple):
    """What the page needs to know of a node of the drawing: its instruction, its kind
    ("value", "operation" or "constant") and what a screen reader says of it (or None)."""

    instruction: int
    kind: str
    label: str | None = None


class LiveSvg(NamedTuple):
    """The drawing cut up for the page: the <svg> element with the background, statement boxes
    and edges, and an empty group per tile; each tile's markup and extent (x0, y0, x1, y1 in
    the SVG's user units); per instruction, the numbers of its edges in the edge paths (the
    edges into its operation and from it to its value)."""

    shell: str
    tiles: list[str]
    boxes: list[tuple[float, float, float, float]]
    edges: dict[int, list[int]]


def _local(tag: str) -> str:
    return tag.removeprefix(SVG)


def _text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _value(value: str) -> str:
    return _text(value).replace('"', "&quot;")


# The namespaces of attributes (xlink:href, xml:space) as ElementTree names them, and their
# prefixes in markup.
PREFIXES = {XLINK: "xlink:", "{http://www.w3.org/XML/1998/namespace}": "xml:"}


def _attribute(name: str) -> str:
    """An attribute's name in markup: `xml:space`, not ElementTree's `{...namespace}space`."""
    for namespace, prefix in PREFIXES.items():
        if name.startswith(namespace):
            return prefix + name.removeprefix(namespace)
    return name


def _markup(e: ET.Element) -> str:
    """An element as markup for an HTML page's inline SVG: no namespaces, no whitespace between
    elements (each would be a node of the page's document too)."""
    tag = _local(e.tag)
    attrs = "".join(f' {_attribute(k)}="{_value(v)}"' for k, v in e.attrib.items())
    parts = [_text(e.text)] if e.text and e.text.strip() else []
    for child in e:
        parts.append(_markup(child))
        if child.tail and child.tail.strip():
            parts.append(_text(child.tail))
    inner = "".join(parts)
    return f"<{tag}{attrs}>{inner}</{tag}>" if inner else f"<{tag}{attrs}/>"


def _points(e: ET.Element) -> list[tuple[float, float]]:
    """The points that bound an element's geometry (for a curve, its control points)."""
    tag = _local(e.tag)
    if tag in ("polygon", "polyline", "path"):
        numbers = [float(n) for n in NUMBER.findall(e.get("points") or e.get("d") or "")]
        return list(zip(numbers[::2], numbers[1::2], strict=False))
    if tag == "ellipse":
        cx, cy = float(e.get("cx", 0)), float(e.get("cy", 0))
        rx, ry = float(e.get("rx", 0)), float(e.get("ry", 0))
        return [(cx - rx, cy - ry), (cx + rx, cy + ry)]
    if tag == "text":
        x, y = float(e.get("x", 0)), float(e.get("y", 0))
        size = float(e.get("font-size", 14))
        half = 0.3 * size * len(e.text or "")  # about half the width of the text
        return [(x - 2 * half, y - size), (x + 2 * half, y + size / 2)]
    return [p for child in e for p in _points(child)]


def _head_path(points: str) -> str:
    """A polygon's points as a closed subpath."""
    return "M" + "L".join(points.split()) + "Z"


def _transform(graph: ET.Element):
    """Graphviz's transform of its graph group, as a function from the graph's coordinates to
    the SVG's user units; None for one this does not read (then all is one tile)."""
    text = graph.get("transform", "")
    scale = re.search(r"scale\((\S+?)(?: (\S+?))?\)", text)
    translate = re.search(r"translate\((\S+?) (\S+?)\)", text)
    rotate = re.search(r"rotate\((\S+?)\)", text)
    if not translate or (rotate and float(rotate.group(1)) != 0):
        return None
    sx = float(scale.group(1)) if scale else 1.0
    sy = float(scale.group(2) or scale.group(1)) if scale else 1.0
    tx, ty = float(translate.group(1)), float(translate.group(2))
    return lambda x, y: (sx * (x + tx), sy * (y + ty))


def live_svg(svg_text: str, nodes: Mapping[str, Node]) -> LiveSvg:
    """Graphviz's SVG of a drawing cut up for the live page; `nodes` says, by node name, which
    nodes are the program's (others, such as a legend, stay as they are)."""
    root = ET.fromstring(svg_text.encode())
    graph = root.find(f"{SVG}g")
    if graph is None:
        raise ValueError("not a Graphviz drawing: no graph group")
    place = _transform(graph)
    graph.attrib.pop("id", None)
    texts = list(graph.iter(f"{SVG}text"))
    for attribute in SHARED:
        values = Counter(t.get(attribute) for t in texts)
        if values and None not in values:  # else a text would take on a value it did not have
            value = cast(str, values.most_common(1)[0][0])
            graph.set(attribute, value)
            for t in texts:
                if t.get(attribute) == value:
                    del t.attrib[attribute]
    lines: list[str] = []
    heads: list[str] = []
    edges: dict[int, list[int]] = {}
    kept: list[ET.Element] = []  # the background, statement boxes, edges not merged
    tiled: list[ET.Element] = []  # nodes and edge labels
    for e in graph:
        if _local(e.tag) == "title":
            continue
        title = e.find(f"{SVG}title")
        name = title.text if title is not None else None
        if title is not None:
            e.remove(title)
        e.attrib.pop("id", None)
        kind = e.get("class")
        if kind == "node" and name is not None and name in nodes:
            tiled.append(_node(e, name, nodes[name]))
        elif kind == "edge" and name is not None:
            head = nodes.get(name.partition("->")[2])
            path, polygon = e.find(f"{SVG}path"), e.find(f"{SVG}polygon")
            plain = (
                path is not None
                and polygon is not None
                and {k: v for k, v in path.attrib.items() if k != "d"} == PLAIN_LINE
                and {k: v for k, v in polygon.attrib.items() if k != "points"} == PLAIN_HEAD
                and path.get("d", "").count("M") == 1
                and len(e) in (2, 3)
            )
            if not plain or path is None or polygon is None:
                kept.append(e)
                continue
            if head is not None:
                edges.setdefault(head.instruction, []).append(len(lines))
            lines.append(path.get("d", ""))
            heads.append(_head_path(polygon.get("points", "")))
            for label in e.iter(f"{SVG}text"):
                label.set("class", "edge-label")
                tiled.append(label)
        else:
            kept.append(e)
    for e in list(graph):
        graph.remove(e)
    graph.extend(kept)
    if lines:
        ET.SubElement(graph, "path", {"class": "edges", **PLAIN_LINE, "d": "".join(lines)})
        ET.SubElement(graph, "path", {"class": "arrowheads", **PLAIN_HEAD, "d": "".join(heads)})
    tiles, boxes = _tiles(tiled, place)
    for _ in tiles:
        ET.SubElement(graph, "g", {"class": "tile"})
    ET.SubElement(graph, "g", {"class": "current-edges"})
    return LiveSvg(_markup(root), tiles, boxes, edges)


def _node(g: ET.Element, name: str, node: Node) -> ET.Element:
    """A node's group with its name, instruction and kind, focusable, its shapes before its
    texts (so that a value's last two children are its data and grad, and its first the shape
    the page fills)."""
    g.set("class", f"node {node.kind}")
    g.set("data-node", name)
    g.set("data-instruction", str(node.instruction))
    g.set("tabindex", "0")
    g.set("role", "img")
    if node.label is not None:
        g.set("aria-label", node.label)
    children = list(g)
    shapes = [c for c in children if _local(c.tag) != "text"]
    texts = [c for c in children if _local(c.tag) == "text"]
    if node.kind == "value" and not (
        len(texts) >= 2
        and (texts[-2].text or "").startswith("data ")
        and (texts[-1].text or "").startswith("grad ")
        and shapes
    ):
        raise ValueError(f"the drawing's node {name} has no data and grad fields")
    for c in children:
        g.remove(c)
    g.extend(shapes + texts)
    return g


def _tiles(
    elements: list[ET.Element], place
) -> tuple[list[str], list[tuple[float, float, float, float]]]:
    """The elements grouped by the TILE-sized square their centre is in, in rows from the top
    left, with each group's extent."""
    groups: dict[tuple[int, int], list[ET.Element]] = {}
    extents: dict[tuple[int, int], list[float]] = {}
    for e in elements:
        points = _points(e)
        if place is not None and points:
            points = [place(x, y) for x, y in points]
            xs, ys = [x for x, _ in points], [y for _, y in points]
            box = [min(xs), min(ys), max(xs), max(ys)]
            key = (
                math.floor((box[1] + box[3]) / 2 / TILE),
                math.floor((box[0] + box[2]) / 2 / TILE),
            )
        else:  # nowhere known: a tile that is always in view
            box = [-math.inf, -math.inf, math.inf, math.inf]
            key = (-1, -1)
        groups.setdefault(key, []).append(e)
        old = extents.setdefault(key, box)
        extents[key] = [*map(min, old[:2], box[:2]), *map(max, old[2:], box[2:])]
    keys = sorted(groups)
    tiles = ["".join(_markup(e) for e in groups[k]) for k in keys]
    boxes = []
    for k in keys:
        x0, y0, x1, y1 = (
            round(v, 1) if math.isfinite(v) else (-1e308 if v < 0 else 1e308) for v in extents[k]
        )
        boxes.append((x0, y0, x1, y1))
    return tiles, boxes
