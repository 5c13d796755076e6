"""chapter2.chat: our renderings equal jinja2's and transformers' `apply_chat_template`."""

import json

import pytest
from _oracles import require
from hypothesis import given, settings
from hypothesis import strategies as st

transformers = require("transformers")  # the oracle; part of the [hf] extra

from chapter2.chat import TEMPLATES, check_messages, render_chat, render_jinja  # noqa: E402
from chapter2.tokenizer import DEFAULT_SPECIAL_TOKENS, BPETokenizer, train_bpe  # noqa: E402

SYSTEM_USER = [{"role": "system", "content": "You are helpful."}, {"role": "user", "content": "Hi"}]

CONTENT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40) | st.sampled_from(
    ["", " padded \n", "\n\nline\n", "{{ not jinja }}", "{% raw %}", "<|im_end|>", "tab\tand\r\n"])
MESSAGE = st.fixed_dictionaries({"role": st.sampled_from(["system", "user", "assistant", "tool"]), "content": CONTENT})
CONVERSATION = st.lists(MESSAGE, min_size=1, max_size=5)
THINKING = st.sampled_from([None, True, False])


@pytest.fixture(scope="module")
def hf_tokenizers():
    """A transformers tokenizer per template, built offline from a BPE trained here, chat_template set."""
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    data = train_bpe(["The KV cache grows by one token per decode step."] * 4, 300,
                     special_tokens=DEFAULT_SPECIAL_TOKENS + ("<|begin_of_text|>", "<|start_header_id|>",
                                                              "<|end_header_id|>", "<|eot_id|>"))
    out = {}
    for name, t in TEMPLATES.items():
        tok = PreTrainedTokenizerFast(tokenizer_object=Tokenizer.from_str(json.dumps(data)),
                                      bos_token=t.bos_token or None, eos_token=t.eos_token)
        tok.chat_template = t.source
        out[name] = tok
    return out, BPETokenizer.from_json(data)


# ----------------------------------------------------------------------------- published formats


def test_chatml_is_the_published_format():
    # the ChatML layout shown in Qwen's documentation: <|im_start|>{role}\n{content}<|im_end|>\n per message
    expected = ("<|im_start|>system\nYou are helpful.<|im_end|>\n"
                "<|im_start|>user\nHi<|im_end|>\n"
                "<|im_start|>assistant\n")
    assert render_chat(SYSTEM_USER, "chatml") == expected
    assert render_chat(SYSTEM_USER, "chatml", add_generation_prompt=False) == expected[:-len("<|im_start|>assistant\n")]


def test_qwen3_non_thinking_switch_prefills_an_empty_reasoning_block():
    # Qwen3 model card: enable_thinking=False makes the template emit an empty <think></think> block
    out = render_chat(SYSTEM_USER, "chatml", enable_thinking=False)
    assert out.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert render_chat(SYSTEM_USER, "chatml", enable_thinking=True) == render_chat(SYSTEM_USER, "chatml")


def test_llama3_is_the_published_format():
    # https://www.llama.com/docs/model-cards-and-prompt-formats/meta-llama-3/ ("Meta Llama 3 Instruct")
    expected = ("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are helpful.<|eot_id|>"
                "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
                "<|start_header_id|>assistant<|end_header_id|>\n\n")
    assert render_chat(SYSTEM_USER, "llama3") == expected
    padded = [{"role": "user", "content": "  Hi \n"}]
    assert render_chat(padded, "llama3") == render_chat([{"role": "user", "content": "Hi"}], "llama3")


# ----------------------------------------------------------------------------- agreement with jinja2 and transformers


@settings(max_examples=150, deadline=None)
@given(CONVERSATION, st.booleans(), THINKING)
def test_plain_python_equals_jinja(messages, add_generation_prompt, enable_thinking):
    for name, t in TEMPLATES.items():
        extra = {} if enable_thinking is None else {"enable_thinking": enable_thinking}
        expected = render_jinja(t.source, messages, add_generation_prompt=add_generation_prompt,
                                bos_token=t.bos_token, eos_token=t.eos_token, **extra)
        got = render_chat(messages, name, add_generation_prompt=add_generation_prompt, enable_thinking=enable_thinking)
        assert got == expected


@settings(max_examples=60, deadline=None)
@given(CONVERSATION, st.booleans(), THINKING)
def test_equals_transformers_apply_chat_template(hf_tokenizers, messages, add_generation_prompt, enable_thinking):
    toks, _ = hf_tokenizers
    for name, tok in toks.items():
        extra = {} if enable_thinking is None else {"enable_thinking": enable_thinking}
        expected = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=add_generation_prompt, **extra)
        assert render_chat(messages, name, add_generation_prompt=add_generation_prompt,
                           enable_thinking=enable_thinking) == expected


def test_the_model_sees_special_tokens_as_single_ids(hf_tokenizers):
    toks, ours = hf_tokenizers
    for name, tok in toks.items():
        text = render_chat(SYSTEM_USER, name)
        ids = ours.encode(text)
        assert ids == tok(text, add_special_tokens=False)["input_ids"]
        assert ids == tok.apply_chat_template(SYSTEM_USER, tokenize=True, add_generation_prompt=True, return_dict=True)["input_ids"]
        eos = ours.special_tokens[TEMPLATES[name].eos_token]
        assert ids.count(eos) == len(SYSTEM_USER)  # one end-of-turn marker per message, none after the prompt


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize("messages, error, match", [
    ({"role": "user", "content": "x"}, TypeError, "messages must be a list"),
    ([], ValueError, "at least one message"),
    (["hi"], TypeError, r"messages\[0\] must be a dict"),
    ([{"content": "x"}], ValueError, r"messages\[0\]\['role'\] must be a non-empty string"),
    ([{"role": "user", "content": None}], TypeError, r"messages\[0\]\['content'\] must be a string"),
])
def test_bad_messages(messages, error, match):
    with pytest.raises(error, match=match):
        render_chat(messages)
    with pytest.raises(error, match=match):
        check_messages(messages)


def test_bad_options():
    with pytest.raises(ValueError, match="template must be one of"):
        render_chat(SYSTEM_USER, "mistral")
    with pytest.raises(TypeError, match="add_generation_prompt must be a bool"):
        render_chat(SYSTEM_USER, add_generation_prompt="yes")
    with pytest.raises(TypeError, match="enable_thinking must be a bool or None"):
        render_chat(SYSTEM_USER, enable_thinking=0)
    with pytest.raises(TypeError, match="source must be a non-empty Jinja template"):
        render_jinja("", SYSTEM_USER)
