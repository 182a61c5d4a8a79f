"""The message tree of one ChatGPT conversation: what a person saw, and who answered whom.

A conversation's `mapping` is a tree of nodes (edits and regenerations are branches).
`current_node` names the leaf of the branch the person last saw. Only what the person saw
counts: system messages, hidden nodes (custom instructions, tool plumbing) and calls from
the assistant to a tool are not messages; text parts are kept as they are and other parts
(images, files, reasoning) become a short placeholder such as `[image]`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

HIDDEN_FLAGS = (
    "is_visually_hidden_from_conversation",
    "is_user_system_message",
    "is_contextual_answers_system_message",
)
HIDDEN_CONTENT_TYPES = {"user_editable_context", "model_editable_context"}
REASONING_TYPES = {"thoughts", "reasoning_recap"}
PART_PLACEHOLDERS = {
    "image_asset_pointer": "[image]",
    "audio_asset_pointer": "[audio]",
    "real_time_user_audio_video_asset_pointer": "[audio]",
    "video_container_asset_pointer": "[video]",
    "file_asset_pointer": "[file]",
}
MAX_REPLY_VARIANTS = 64  # regenerations of one question are few; a cap keeps a bad tree cheap


@dataclass(frozen=True)
class Shown:
    """A message as the person saw it."""

    node_id: str  # its key in the mapping (what parents and children name)
    role: str  # user | assistant | tool
    content: str
    create_time: float | int | None  # seconds, as the export gives it
    is_answer: bool  # part of the reply a question got (not reasoning, not a tool call)
    content_type: str


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, dict):
        kind = str(part.get("content_type") or "attachment")
        if kind == "audio_transcription" and isinstance(part.get("text"), str):
            return part["text"]
        return PART_PLACEHOLDERS.get(kind, f"[{kind}]")
    return ""


def _attachments(metadata: dict[str, Any]) -> list[str]:
    names = []
    attachments = metadata.get("attachments")
    for attachment in attachments if isinstance(attachments, list) else []:
        if isinstance(attachment, dict):
            name = attachment.get("name")
            names.append(f"[file: {name}]" if isinstance(name, str) and name else "[file]")
    return names


def _body(content: dict[str, Any]) -> str:
    kind = content.get("content_type")
    parts = content.get("parts")
    if isinstance(parts, list):
        if kind == "text":  # one message split in pieces: join as the export wrote them
            return "".join(p for p in parts if isinstance(p, str))
        pieces = [_part_text(p) for p in parts]
        return "\n".join(p for p in pieces if p.strip())
    if kind == "code" and isinstance(content.get("text"), str):
        language = content.get("language") or ""
        language = "" if language == "unknown" else language
        return f"```{language}\n{content['text']}\n```"
    for key in ("text", "result"):
        if isinstance(content.get(key), str):
            return content[key]
    return ""


def _object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def render(node: object, node_id: str) -> Shown | None:
    """The message of the node `node_id` names as shown, or None when the person did not see
    it as a message (or the node is no object)."""
    message = node.get("message") if isinstance(node, dict) else None
    if not isinstance(message, dict):
        return None
    role = _object(message.get("author")).get("role")
    metadata = _object(message.get("metadata"))
    content = _object(message.get("content"))
    kind = str(content.get("content_type") or "text")
    if role not in ("user", "assistant", "tool") or kind in HIDDEN_CONTENT_TYPES:
        return None
    if any(metadata.get(flag) for flag in HIDDEN_FLAGS):
        return None
    is_answer = True
    if role == "assistant":
        if message.get("recipient") not in (None, "all"):
            return None  # a call to a tool, not words to the person
        if kind in REASONING_TYPES:
            text, is_answer = "[reasoning]", False
        else:
            text = _body(content)
            is_answer = kind != "code"
    elif role == "tool":
        # Tool output is plumbing; what a tool showed the person is its images.
        parts = content.get("parts")
        parts = parts if isinstance(parts, list) else []
        images = [_part_text(p) for p in parts if isinstance(p, dict)]
        text = "\n".join(images)
    else:
        text = "\n".join(p for p in [_body(content), *_attachments(metadata)] if p.strip())
    if not text.strip():
        return None
    created = message.get("create_time")
    created = (
        created if isinstance(created, int | float) and not isinstance(created, bool) else None
    )
    return Shown(node_id, role, text, created, is_answer, kind)


def _children(mapping: dict[str, Any], node_id: str) -> list[str]:
    node = mapping.get(node_id)
    children = node.get("children") if isinstance(node, dict) else None
    if not isinstance(children, list):
        return []
    return [c for c in children if isinstance(c, str) and c in mapping]


def _parent(mapping: dict[str, Any], node_id: str) -> str | None:
    node = mapping.get(node_id)
    parent = node.get("parent") if isinstance(node, dict) else None
    return parent if isinstance(parent, str) and parent in mapping else None


def _latest_leaf(mapping: dict[str, Any]) -> str | None:
    """Without a usable `current_node`: the leaf written last (file order breaks ties)."""
    best: tuple[float, int] | None = None
    chosen = None
    for index, node_id in enumerate(mapping):
        if _children(mapping, node_id):
            continue
        node = mapping[node_id]
        message = node.get("message") if isinstance(node, dict) else None
        created = message.get("create_time") if isinstance(message, dict) else None
        rank = (_sortable(created), index)
        if best is None or rank > best:
            best, chosen = rank, node_id
    return chosen


def _sortable(value: Any) -> float:
    """A time to compare: a number as a float (past a float's range: infinite), else -inf."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return float("-inf")
    try:
        return float(value)
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")


def current_branch(mapping: dict[str, Any], current_node: Any) -> list[str]:
    """Node ids from the root to the node the person last saw."""
    leaf = current_node if isinstance(current_node, str) and current_node in mapping else None
    leaf = leaf or _latest_leaf(mapping)
    path: list[str] = []
    seen: set[str] = set()
    while leaf is not None and leaf not in seen:
        seen.add(leaf)
        path.append(leaf)
        leaf = _parent(mapping, leaf)
    path.reverse()
    return path


def all_nodes(mapping: dict[str, Any]) -> list[str]:
    """Every node, parents before children (depth first from each root, in file order)."""
    order: list[str] = []
    seen: set[str] = set()
    roots = [n for n in mapping if _parent(mapping, n) is None]
    for start in [*roots, *mapping]:  # the tail catches nodes caught in a cycle
        stack = [start]
        while stack:
            node_id = stack.pop()
            if node_id in seen:
                continue
            seen.add(node_id)
            order.append(node_id)
            stack.extend(reversed(_children(mapping, node_id)))
    return order


def branch_children(path: list[str]) -> Callable[[str], list[str]]:
    following = dict(zip(path, path[1:], strict=False))
    return lambda node_id: [following[node_id]] if node_id in following else []


def tree_children(mapping: dict[str, Any]) -> Callable[[str], list[str]]:
    return lambda node_id: _children(mapping, node_id)


def _replies(
    user_id: str, children: Callable[[str], list[str]], shown: dict[str, Shown]
) -> list[tuple[Shown, ...]]:
    """Each reply the question got: answer messages down to the next question or a leaf."""
    replies: list[tuple[Shown, ...]] = []
    # A reply so far is a chain (message, the chain before it): extending one is a step,
    # where copying a tuple at each message took time squared in a long reply.
    Chain = tuple[Shown, Any] | None
    stack: list[tuple[str, Chain]] = [(user_id, None)]
    visited: set[str] = {user_id}
    while stack and len(replies) < MAX_REPLY_VARIANTS:
        node_id, answers = stack.pop()
        ends_here = True
        for child in reversed(children(node_id)):
            message = shown.get(child)
            if (message is not None and message.role == "user") or child in visited:
                continue
            visited.add(child)
            ends_here = False
            if message is not None and message.is_answer:
                stack.append((child, (message, answers)))
            else:  # a tool call, tool output, reasoning: the reply is further down
                stack.append((child, answers))
        if ends_here and answers is not None:
            reply = _unchained(answers)
            if reply not in replies:
                replies.append(reply)
    return replies


def _unchained(chain: tuple[Shown, Any]) -> tuple[Shown, ...]:
    messages: list[Shown] = []
    link: tuple[Shown, Any] | None = chain
    while link is not None:
        messages.append(link[0])
        link = link[1]
    messages.reverse()
    return tuple(messages)


def pairs(
    order: list[str], children: Callable[[str], list[str]], shown: dict[str, Shown]
) -> Iterator[tuple[Shown, tuple[Shown, ...]]]:
    """(question, reply) for each question; a question nobody answered has an empty reply."""
    for node_id in order:
        question = shown.get(node_id)
        if question is None or question.role != "user":
            continue
        replies = _replies(node_id, children, shown)
        if not replies:
            yield question, ()
        for reply in replies:
            yield question, reply
