"""Section 2.2.3 (attention, on docs/llm-architecture.md): the facts of its intuition-first opening, against
values worked out here: transformers' own attention weights on the shipped tiny model, its config.json read
as JSON, and the worked example by hand."""

from __future__ import annotations

import json
import math

import pytest
from _oracles import require

from chapter2.models import TINY_LM_DIR
from chapter2.pages import llm_architecture as la

CONFIG = json.loads((TINY_LM_DIR / "config.json").read_text())


@pytest.fixture(scope="module")
def hf_weights():
    """transformers' attention weights of the example sentence (eager attention, float64): the oracle."""
    torch = require("torch")
    require("transformers")
    from transformers import AutoTokenizer, LlamaForCausalLM

    model = LlamaForCausalLM.from_pretrained(TINY_LM_DIR, dtype=torch.float64, attn_implementation="eager",
                                             local_files_only=True).eval()
    tokenizer = AutoTokenizer.from_pretrained(TINY_LM_DIR, local_files_only=True)
    ids = tokenizer("The KV cache stores the keys and", add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        attentions = model(input_ids=torch.tensor([ids]), output_attentions=True).attentions
    tokens = [tokenizer.convert_tokens_to_string([t]).strip() for t in tokenizer.convert_ids_to_tokens(ids)]
    return tokens, attentions


def test_the_example_is_a_real_sentence_and_a_real_head(hf_weights):
    tokens, attentions = hf_weights
    assert str(la.attention_example_prompt()) == "The KV cache stores the keys and"
    assert (la.attention_example_layer().value, la.attention_example_head().value) == (1, 4)
    assert str(la.attention_example_query()) == tokens[-1] == "and"
    row = attentions[0][0, 3, -1].numpy()  # layer 1, head 4, the last token's row
    order = sorted(range(len(row)), key=lambda j: -row[j])
    assert str(la.attention_example_top_token()) == tokens[order[0]] == "keys"
    assert tokens[order[1]] == "The"  # second, as the figure's alt text says
    assert la.attention_example_top_weight().value == pytest.approx(row[order[0]], abs=1e-6)
    assert str(la.attention_example_top_weight()) == "72 %"


def test_the_tiny_model_s_sizes_are_its_config_json():
    assert la.tiny_lm_hidden_size().value == CONFIG["hidden_size"] == 128
    assert la.tiny_lm_head_dim().value == CONFIG["head_dim"] == CONFIG["hidden_size"] // CONFIG["num_attention_heads"]
    assert la.tiny_lm_query_heads().value == CONFIG["num_attention_heads"] == 4
    assert la.tiny_lm_kv_heads().value == CONFIG["num_key_value_heads"] == 2


def test_the_worked_example_by_hand():
    # query (1, 2) against keys (1, 0), (2, 1), (0, 1): dot products 1, 4, 2
    assert str(la.attention_worked_query()) == "(1, 2)"
    e = [math.exp(1), math.exp(4), math.exp(2)]
    weights = [x / sum(e) for x in e]  # 0.0420, 0.8438, 0.1142
    table = str(la.attention_worked_table())
    assert "| ‘The’ | (1, 0) | 1 | 4.2 % | (1, 0) |" in table
    assert "| ‘keys’ | (2, 1) | 4 | 84 % | (0, 1) |" in table
    assert "| ‘and’ | (0, 1) | 2 | 11 % | (1, 1) |" in table
    assert f"{100 * weights[1]:.2g} %" == "84 %"
    # output: weights times values (1, 0), (0, 1), (1, 1)
    out = (weights[0] + weights[2], weights[1] + weights[2])
    assert str(la.attention_worked_output()) == f"({out[0]:.2f}, {out[1]:.2f})" == "(0.16, 0.96)"
