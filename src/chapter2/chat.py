"""Chat templates: the exact string a chat model sees (chapter section 2.2).

An API request carries a list of messages (`{"role": "user", "content":
"..."}`), but the model only reads one token sequence. The *chat template*,
shipped with each model as a Jinja template in `tokenizer_config.json`
(`"chat_template"`), flattens the messages into the text format the model was
fine-tuned on, with special tokens marking where each turn starts and ends.
With `add_generation_prompt=True` it ends with the header of an assistant
turn, so the model's next tokens are the answer; it stops by emitting the
end-of-turn token (`eos_token` below), which the server treats as a stop
token.

Two formats, written here as Jinja sources in the style of the published ones:

- "chatml": ChatML as used by Qwen (`<|im_start|>role\\n...<|im_end|>\\n`),
  plus Qwen3's switch `enable_thinking=False`, which pre-fills an empty
  reasoning block `<think>\\n\\n</think>\\n\\n` so the model skips its reasoning
  sequence (https://huggingface.co/Qwen/Qwen3-8B, "Switching Between
  Thinking and Non-Thinking Mode").
- "llama3": the Llama 3 Instruct format
  (`<|begin_of_text|><|start_header_id|>role<|end_header_id|>\\n\\n...<|eot_id|>`,
  https://www.llama.com/docs/model-cards-and-prompt-formats/meta-llama-3/),
  which also strips whitespace around each message's content.

`render_chat` renders them in plain Python (runs in the browser);
`render_jinja` renders any template source with jinja2 configured as
Hugging Face transformers' `apply_chat_template` configures it (CPython
only). The tests check that the two agree with each other and with
transformers on random conversations.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ChatTemplate", "TEMPLATES", "render_chat", "render_jinja", "check_messages"]


@dataclass(frozen=True)
class ChatTemplate:
    """A chat format: its Jinja `source` and the special tokens the source refers to.

    `bos_token` is put in front by the template itself (empty if none);
    `eos_token` ends every turn and is the stop token of generation.
    """

    name: str
    source: str
    bos_token: str
    eos_token: str
    reference: str


CHATML_SOURCE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}"
    "{{- '<|im_start|>assistant\\n' }}"
    "{%- if enable_thinking is defined and enable_thinking is false %}"
    "{{- '<think>\\n\\n</think>\\n\\n' }}"
    "{%- endif %}"
    "{%- endif %}"
)

LLAMA3_SOURCE = (
    "{{- bos_token }}"
    "{%- for message in messages %}"
    "{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + message['content'] | trim + '<|eot_id|>' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}"
    "{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}"
    "{%- endif %}"
)

TEMPLATES = {
    "chatml": ChatTemplate("chatml", CHATML_SOURCE, bos_token="", eos_token="<|im_end|>",
                           reference="https://huggingface.co/Qwen/Qwen3-8B/blob/main/tokenizer_config.json"),
    "llama3": ChatTemplate("llama3", LLAMA3_SOURCE, bos_token="<|begin_of_text|>", eos_token="<|eot_id|>",
                           reference="https://www.llama.com/docs/model-cards-and-prompt-formats/meta-llama-3/"),
}


def check_messages(messages) -> list[dict]:
    """Validate a conversation: a non-empty list of {"role": str, "content": str} dicts."""
    if isinstance(messages, dict | str) or not hasattr(messages, "__iter__"):
        raise TypeError(f"messages must be a list of {{'role': ..., 'content': ...}} dicts, got {type(messages).__name__}")
    messages = list(messages)
    if not messages:
        raise ValueError("messages must hold at least one message")
    for k, m in enumerate(messages):
        if not isinstance(m, dict):
            raise TypeError(f"messages[{k}] must be a dict with 'role' and 'content', got {type(m).__name__}")
        role, content = m.get("role"), m.get("content")
        if not isinstance(role, str) or not role:
            raise ValueError(f"messages[{k}]['role'] must be a non-empty string such as 'system', 'user' or 'assistant', got {role!r}")
        if not isinstance(content, str):
            raise TypeError(f"messages[{k}]['content'] must be a string, got {type(content).__name__}")
    return messages


def _template(template) -> ChatTemplate:
    if isinstance(template, ChatTemplate):
        return template
    if template not in TEMPLATES:
        raise ValueError(f"template must be one of {sorted(TEMPLATES)}, got {template!r}")
    return TEMPLATES[template]


def render_chat(messages, template: str = "chatml", *, add_generation_prompt: bool = True,
                enable_thinking: bool | None = None) -> str:
    """The prompt string for `messages` in format `template` ("chatml" or "llama3"), in plain Python.

    Line for line the same as the Jinja sources above; `enable_thinking=False`
    only affects "chatml" (Qwen3's switch), None leaves it undefined.
    """
    messages = check_messages(messages)
    t = _template(template)
    if not isinstance(add_generation_prompt, bool):
        raise TypeError(f"add_generation_prompt must be a bool, got {add_generation_prompt!r}")
    if enable_thinking is not None and not isinstance(enable_thinking, bool):
        raise TypeError(f"enable_thinking must be a bool or None, got {enable_thinking!r}")
    if t.name == "chatml":
        out = [f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages]
        if add_generation_prompt:
            out.append("<|im_start|>assistant\n")
            if enable_thinking is False:
                out.append("<think>\n\n</think>\n\n")  # an empty reasoning sequence
        return "".join(out)
    if t.name == "llama3":
        out = [t.bos_token]
        # Jinja's `trim` filter is Python's str.strip()
        out += [f"<|start_header_id|>{m['role']}<|end_header_id|>\n\n{m['content'].strip()}<|eot_id|>" for m in messages]
        if add_generation_prompt:
            out.append("<|start_header_id|>assistant<|end_header_id|>\n\n")
        return "".join(out)
    raise ValueError(f"template {t.name!r} has no plain-Python renderer; use render_jinja(template.source, ...)")


def render_jinja(source: str, messages, *, add_generation_prompt: bool = True, **variables) -> str:
    """Render a Jinja chat template `source` as transformers' `apply_chat_template(tokenize=False)` does.

    The environment matches transformers': a sandboxed immutable environment
    with `trim_blocks`, `lstrip_blocks` and the loop-controls extension; the
    template sees `messages`, `add_generation_prompt` and `variables` (such as
    `bos_token`, `eos_token`, `enable_thinking`). Needs jinja2 (CPython).
    """
    import jinja2.ext
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    if not isinstance(source, str) or not source:
        raise TypeError(f"source must be a non-empty Jinja template string, got {source!r:.80}")
    messages = check_messages(messages)
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    return env.from_string(source).render(messages=messages, add_generation_prompt=add_generation_prompt, **variables)
