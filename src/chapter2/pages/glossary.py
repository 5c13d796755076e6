"""The glossary (docs/glossary.md): every term the chapter leans on, defined once, used everywhere.

Each `Term` is one entry: a one-sentence plain definition for a newcomer who knows Python but not GPUs,
where the site explains it (a page and its anchor), and where it helps a number from the running example
(Llama 3.1 8B on one H100), quoted as the fact of the section that computes it. The same data drives three
things at build time (docs/hooks/glossary_links.py): the glossary page itself, the `<abbr>` that carries an
abbreviation's definition on every use, and the link (with the definition as its tooltip) on the first use of
every term on every page.

The facts of this module are the widths of the number formats the glossary defines, and the one count the
glossary alone shows (DeepSeek-V3's dense layers). IEEE 754 formats come from numpy's own description of
them (`np.finfo`); bfloat16, which numpy lacks, is FP32 with its mantissa cut to 7 bits (Google's
definition, https://cloud.google.com/tpu/docs/bfloat16).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..format import Int
from . import FACT_REF, fact

BF16_MANTISSA_BITS = 7  # bfloat16: FP32's sign and 8 exponent bits, 7 of its 23 mantissa bits


@fact
def fp32_bytes() -> Int:
    """Bytes of one FP32 number (`np.float32` itemsize)."""
    return Int(np.dtype(np.float32).itemsize)


@fact
def fp16_exponent_bits() -> Int:
    """FP16's exponent bits (`np.finfo(np.float16).nexp`)."""
    return Int(np.finfo(np.float16).nexp)


@fact
def fp16_mantissa_bits() -> Int:
    """FP16's stored mantissa bits (`np.finfo(np.float16).nmant`)."""
    return Int(np.finfo(np.float16).nmant)


@fact
def fp32_exponent_bits() -> Int:
    """FP32's exponent bits, which BF16 keeps (`np.finfo(np.float32).nexp`)."""
    return Int(np.finfo(np.float32).nexp)


@fact
def bf16_mantissa_bits() -> Int:
    """BF16's stored mantissa bits (BF16_MANTISSA_BITS): 16 bits less the sign and FP32's exponent bits."""
    return Int(BF16_MANTISSA_BITS)


@fact
def deepseek_v3_dense_layers() -> Int:
    """DeepSeek-V3's layers with a dense MLP instead of experts: its shipped config.json read by
    `models.load_config` (`first_k_dense_replace`: the first layers stay dense)."""
    from ..models import load_config

    c = load_config("DeepSeek-V3")
    return Int(c.num_hidden_layers - len(c.moe_layers))


# --------------------------------------------------------------------------- the entries


@dataclass(frozen=True)
class Term:
    """One glossary entry.

    `definition` is one plain sentence (no Markdown; it may quote facts): the glossary prints it and every
    page carries it as the tooltip of the term. `explained` is where the site explains the term, as
    "page.md#anchor". `example` is optional Markdown after it: a number from the running example (facts) or
    a remark worth knowing. `forms` are the ways pages write the term (default: `name`): plain text, where a
    form that starts with a lower-case letter also matches with a capital, or a regular expression after
    "re:" (to keep a word in one sense: "re:(?<!LM )heads?"). `abbr` lists the forms that carry the
    definition on every use (an `<abbr>`), not only the first: abbreviations a reader meets again and again.
    """

    name: str
    anchor: str
    definition: str
    explained: str
    example: str = ""
    forms: tuple[str, ...] = ()
    abbr: tuple[str, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "definition", " ".join(self.definition.split()))
        object.__setattr__(self, "example", " ".join(self.example.split()))
        if not self.forms:
            object.__setattr__(self, "forms", (self.name,))
        if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", self.anchor):
            raise ValueError(f"{self.name}: anchor must be lower-case letters, digits and hyphens, got {self.anchor!r}")
        if not re.fullmatch(r"[\w-]+\.md#[\w-]+", self.explained):
            raise ValueError(f"{self.name}: explained must be 'page.md#anchor', got {self.explained!r}")
        if re.search(r"[*_`\[\]<>]|\\\(", FACT_REF.sub("", self.definition)):
            raise ValueError(f"{self.name}: the definition is plain text (it is a tooltip too), got {self.definition!r}")
        for form in self.abbr:
            if form.startswith("re:") or not self.pattern().fullmatch(form):
                raise ValueError(f"{self.name}: abbreviation {form!r} must be plain text and one of its forms")

    def pattern(self) -> re.Pattern:
        """One regular expression for every form, longest first, each a whole word (no letter, digit or hyphen
        on either side); a space in a plain form matches any run of white space (a line break in the HTML)."""
        alternatives = []
        for form in sorted(self.forms, key=len, reverse=True):
            if form.startswith("re:"):
                alternatives.append(form[3:])
            else:
                text = re.escape(form).replace("\\ ", r"\s+")
                alternatives.append(f"[{form[0]}{form[0].upper()}]{text[1:]}" if form[0].islower() else text)
        return re.compile(r"(?<![\w-])(?:" + "|".join(alternatives) + r")(?![\w-])")


LLM_INF, LLM_ARCH, NN, IMG, BOT, ATT = ("llm-inference.md", "llm-architecture.md", "neural-networks.md",
                                        "image-generation.md", "bottlenecks.md", "attention.md")

GROUPS: tuple[tuple[str, tuple[Term, ...]], ...] = (
    ("Text, tokens and the model", (
        Term("Token", "token",
             "A piece of text, a whole word or part of one, that a model reads or writes as a single integer id.",
             f"{LLM_INF}#tokens-context-and-chat-templates",
             "Llama 3.1 8B's tokenizer knows {{ fact: llm_inference.llama_8b_vocab_size }} different tokens.",
             forms=("token", "tokens")),
        Term("Context window", "context-window",
             "The most tokens a model handles in one sequence: the prompt, any reasoning and the answer together.",
             f"{LLM_INF}#tokens-context-and-chat-templates",
             "{{ fact: llm_inference.llama_8b_context_window }} tokens for Llama 3.1 8B.",
             forms=("context window", "context windows")),
        Term("Chat template", "chat-template",
             "The model's own format for turning a list of chat messages into one flat sequence of tokens, with "
             "special tokens around each turn.",
             f"{LLM_INF}#tokens-context-and-chat-templates", forms=("chat template", "chat templates")),
        Term("Parameters and weights", "parameters",
             "The numbers a model learned in training; the weights are the parameters of its matrices, and their "
             "count is the model's size, as in the 8B of Llama 3.1 8B.",
             f"{LLM_ARCH}#221-and-222-architecture-and-transformer-blocks",
             "Llama 3.1 8B has {{ fact: llm_architecture.llama_8b_total_params_billion }}B parameters, "
             "{{ fact: llm_inference.llama_8b_weights_bf16 }} in BF16.",
             forms=("parameters", "parameter", r"re:(?<!attention\s)(?<![Rr]outer's\s)weights")),
        Term("Linear layer and matmul", "matmul",
             "A linear layer multiplies its input by a weight matrix, a matrix multiplication (matmul), which is "
             "where nearly all of a model's time goes.",
             f"{NN}#211-linear-layers-and-matmul",
             r"An \((m, k)\) by \((k, n)\) matmul costs \(2mkn\) FLOPs. Llama 3.1 8B's query projection is a "
             "{{ fact: neural_networks.q_proj_shape }} weight: one token through it is "
             "{{ fact: neural_networks.q_proj_decode_ops }}.",
             forms=("linear layer", "linear layers", "matmul", "matmuls", "matrix multiplication",
                    "matrix multiplications")),
        Term("Hidden state", "hidden-state",
             "The vector a layer hands to the next for each token; its length is the model's hidden size.",
             f"{NN}#21-neural-networks",
             "{{ fact: neural_networks.llama_8b_hidden_size }} numbers per token in Llama 3.1 8B.",
             forms=("hidden state", "hidden states", "hidden size")),
        Term("Activation function", "activation-function",
             "A nonlinear function (ReLU, SiLU, GELU) applied to every number between two linear layers, without "
             "which a stack of linear layers would collapse into one.",
             f"{NN}#212-activation-functions", forms=("activation function", "activation functions")),
        Term("SwiGLU", "swiglu",
             "The gated feed-forward block of Llama and Qwen: one projection of the input, passed through SiLU, "
             "multiplied number by number by a second projection.",
             f"{NN}#212-activation-functions"),
        Term("Decoder-only", "decoder-only",
             "A model that is one stack of identical blocks reading the text so far and predicting the next token, "
             "as every modern chat LLM is.",
             f"{NN}#21-neural-networks", forms=("decoder-only",)),
        Term("Embedding", "embedding",
             "A vector that stands for a token: a language model's embedding table turns each token id into one, "
             "as its first step.",
             f"{LLM_ARCH}#221-and-222-architecture-and-transformer-blocks",
             "Llama 3.1 8B's has {{ fact: llm_inference.llama_8b_vocab_size }} rows of "
             "{{ fact: neural_networks.llama_8b_hidden_size }} numbers.",
             forms=("embedding", "embeddings")),
        Term("Transformer block", "transformer-block",
             "One of a transformer's identical layers: attention, then a feed-forward network, each with a "
             "normalization before it and a residual connection around it.",
             f"{LLM_ARCH}#221-and-222-architecture-and-transformer-blocks",
             "Llama 3.1 8B stacks {{ fact: llm_architecture.llama_8b_layers }} of them.",
             forms=("transformer block", "transformer blocks")),
        Term("Feed-forward network", "ffn",
             "The part of each block that transforms every token on its own, with no look at other tokens; in "
             "Llama a SwiGLU MLP, and where most of the weights sit.",
             f"{LLM_ARCH}#221-and-222-architecture-and-transformer-blocks",
             "{{ fact: llm_architecture.llama_8b_ffn_share }} of Llama 3.1 8B's weights.",
             forms=("feed-forward network", "feed-forward networks", "FFN", "MLP", "MLPs")),
        Term("RMSNorm", "rmsnorm",
             "The normalization before each sublayer: every token's vector is divided by its root mean square, "
             "then scaled by learned gains.",
             f"{LLM_ARCH}#221-and-222-architecture-and-transformer-blocks"),
        Term("LM head", "lm-head",
             "The last matrix of a language model: it turns the final hidden state into one logit per vocabulary "
             "token.",
             f"{LLM_ARCH}#221-and-222-architecture-and-transformer-blocks"),
        Term("Logits", "logits",
             "The raw scores a language model outputs for every token of its vocabulary; a softmax turns them "
             "into the probabilities of the next token.",
             f"{LLM_INF}#sampling",
             "One per vocabulary token: {{ fact: llm_inference.llama_8b_vocab_size }} for Llama 3.1 8B.",
             forms=("logits", "logit")),
        Term("Softmax", "softmax",
             "The function that turns a list of scores into probabilities: exponentiate each score, then divide "
             "by their sum.",
             f"{LLM_ARCH}#223-attention", forms=("softmax", "softmaxes")),
        Term("LoRA", "lora",
             "A fine-tune stored as a small low-rank update beside a frozen weight, so that one server can keep "
             "many adapters next to one copy of the base model.",
             f"{LLM_ARCH}#221-and-222-architecture-and-transformer-blocks",
             "Rank {{ fact: llm_architecture.llama_lora_rank }} on Llama 3.1 8B's query projection trains "
             "{{ fact: llm_architecture.lora_q_proj_share }} of its numbers.",
             forms=("LoRA", "LoRAs"), abbr=("LoRA", "LoRAs")),
        Term("Llama 3.1 8B", "llama-3-1-8b",
             "Meta's open 8-billion-parameter language model, the chapter's running example, served on one H100.",
             f"{LLM_INF}#22-llm-inference",
             "{{ fact: llm_architecture.llama_8b_layers }} blocks, hidden size "
             "{{ fact: neural_networks.llama_8b_hidden_size }}, {{ fact: llm_architecture.llama_8b_query_heads }} "
             "query heads sharing {{ fact: llm_architecture.llama_8b_kv_heads }} key/value heads.",
             forms=("Llama 3.1 8B",)),
    )),
    ("Serving a request", (
        Term("Prefill", "prefill",
             "The first phase of generation: the whole prompt goes through the model in one parallel pass, which "
             "fills the KV cache and yields the first new token.",
             f"{LLM_INF}#prefill-and-decode",
             "On an H100, a Llama 3.1 8B prefill is compute bound from about "
             "{{ fact: bottlenecks.llama_8b_prefill_crossover_tokens }} prompt tokens.",
             forms=("prefill", "prefills", "prefilling")),
        Term("Decode", "decode",
             "The second phase of generation: one pass through the model per new token, each reading all the "
             "weights and the KV cache to add a single token.",
             f"{LLM_INF}#prefill-and-decode",
             "Each Llama 3.1 8B step reads {{ fact: llm_inference.llama_8b_weights_read_bf16 }} of weights: at least "
             "{{ fact: bottlenecks.llama_8b_weight_read_ms }} on an H100.",
             forms=(r"re:(?<!VAE\s)decode", "decodes", "decoding")),
        Term("KV cache", "kv-cache",
             "The keys and values of every earlier token, for every layer, kept in GPU memory so that each decode "
             "step computes only the new token's.",
             f"{LLM_INF}#prefill-and-decode",
             "{{ fact: llm_architecture.llama_8b_kv_per_token }} per token for Llama 3.1 8B in BF16: "
             "{{ fact: llm_inference.llama_8b_kv_full_context }} for one sequence at its full context, more than "
             "its {{ fact: llm_inference.llama_8b_weights_bf16 }} of weights. Why it works: "
             "[inside the model](llm-architecture.md#why-the-cache-is-what-it-is).",
             forms=("KV cache", "KV caches"), abbr=("KV cache", "KV caches")),
        Term("TTFT", "ttft",
             "Time to first token: from sending a request to receiving its first output token, set by the prefill.",
             f"{LLM_INF}#prefill-and-decode", forms=("TTFT", "time to first token"), abbr=("TTFT",)),
        Term("TPOT", "tpot",
             "Time per output token: the time between two output tokens while the model decodes; its inverse is "
             "the tokens per second a user sees.",
             f"{LLM_INF}#prefill-and-decode",
             "At least {{ fact: bottlenecks.llama_8b_weight_read_ms }} for Llama 3.1 8B on an H100, about "
             "{{ fact: bottlenecks.llama_8b_decode_tokens_per_s }} tokens per second at most.",
             forms=("TPOT", "time per output token", "tokens per second"), abbr=("TPOT",)),
        Term("Batch", "batch",
             "The sequences a server runs through the model together, one pass for all of them, so that they "
             "share one read of the weights.",
             f"{BOT}#242-llm-bottlenecks",
             "Llama 3.1 8B's decode weight reads on an H100 stay memory bound up to a batch of about "
             "{{ fact: bottlenecks.llama_8b_weights_critical_batch }} sequences.",
             forms=("batch", "batches", "batching", "batched")),
        Term("Sampling", "sampling",
             "Choosing the next token from the probabilities the logits give, after logit bias, temperature, "
             "top-k and top-p have reshaped them.",
             f"{LLM_INF}#sampling", forms=("sampling", "sampler", "samplers")),
        Term("Logit bias", "logit-bias",
             "A number added to chosen tokens' logits before sampling: positive to favour a token, minus infinity "
             "to ban it.",
             f"{LLM_INF}#sampling", forms=("logit bias", "logit_bias")),
        Term("Temperature", "temperature",
             "The number the logits are divided by before the softmax: below one it sharpens the distribution, "
             "above one it flattens it, and zero means always taking the likeliest token.",
             f"{LLM_INF}#sampling",
             "On the five-token example, halving it lifts the likeliest token from "
             "{{ fact: llm_inference.sampling_token0_prob }} to "
             "{{ fact: llm_inference.sampling_token0_prob_low_temperature }}. A temperature of zero removes the "
             "draw, not every difference between two runs: a server batches your request with others, and "
             "sums taken in another order can flip a near tie between two tokens, so not every API returns the "
             "same text twice (OpenAI's [API reference](https://platform.openai.com/docs/api-reference/chat/create) "
             "says determinism is not guaranteed even with a fixed `seed`; Thinking Machines traces it to "
             "[batch size](https://thinkingmachines.ai/blog/defeating-nondeterminism-in-llm-inference/)).",
             forms=("temperature", "temperatures")),
        Term("Greedy decoding", "greedy",
             "Decoding that always takes the likeliest next token, with no random draw: temperature zero in "
             "OpenAI-style APIs.",
             f"{LLM_INF}#sampling", forms=("greedy decoding", "greedy")),
        Term("Top-k", "top-k",
             "A sampling cut that keeps only the k likeliest tokens before drawing.",
             f"{LLM_INF}#sampling", forms=("top-k", "top_k")),
        Term("Top-p", "top-p",
             "A sampling cut (nucleus sampling) that keeps the fewest likeliest tokens whose probabilities add up "
             "to at least p.",
             f"{LLM_INF}#sampling",
             "On the five-token example, p = {{ fact: llm_inference.sampling_top_p }} keeps "
             "{{ fact: llm_inference.top_p_kept_tokens }} tokens.",
             forms=("top-p", "top_p", "nucleus sampling")),
    )),
    ("Attention", (
        Term("Attention", "attention",
             "The part of each block where a token gathers information from the tokens before it, weighting each "
             "by how well its key matches the token's query.",
             f"{LLM_ARCH}#223-attention", forms=("attention",)),
        Term("Query", "query",
             "The vector a token uses to look for information: attention scores it against every earlier token's "
             "key.",
             f"{LLM_ARCH}#223-attention", forms=("query", "queries")),
        Term("Key", "key",
             "The vector each token offers to be found by: its dot product with a query is the score of that pair.",
             f"{LLM_ARCH}#223-attention", forms=("keys", "key vector", "key vectors", "key/value")),
        Term("Value", "value",
             "The vector a token passes on when it is attended to: attention's output is the weighted sum of the "
             "values.",
             f"{LLM_ARCH}#223-attention",
             forms=(r"re:(?<=keys\sand\s)values", r"re:(?<=key\sand\sa\s)value", "value vector", "value vectors")),
        Term("Head", "head",
             "One of several attentions run side by side in a layer, each with its own projections of the whole "
             "hidden state into queries, keys and values.",
             f"{LLM_ARCH}#223-attention",
             "Llama 3.1 8B: {{ fact: llm_architecture.llama_8b_query_heads }} query heads of "
             "{{ fact: llm_architecture.llama_8b_head_dim }} numbers each.",
             forms=(r"re:(?<!LM\s)heads?", "attention head", "attention heads")),
        Term("Causal mask", "causal-mask",
             "The rule that a token attends only to itself and the tokens before it, never to later ones.",
             f"{LLM_ARCH}#223-attention", forms=("causal mask", "causal masks", "causal attention")),
        Term("GQA", "gqa",
             "Grouped-query attention: several query heads share one key/value head, which makes the KV cache as "
             "many times smaller as there are query heads per group.",
             f"{LLM_ARCH}#223-attention",
             "Llama 3.1 8B: groups of {{ fact: llm_architecture.llama_8b_gqa_group }} query heads, "
             "{{ fact: llm_architecture.llama_8b_kv_heads }} key/value heads.",
             forms=("GQA", "grouped-query attention"), abbr=("GQA",)),
        Term("RoPE", "rope",
             "Rotary position embedding: each query and key is rotated by angles that grow with its position, so "
             "that their dot product depends on how far apart the two tokens are.",
             f"{LLM_ARCH}#multi-head-latent-attention",
             forms=("RoPE", "rotary position embedding", "rotary position embeddings"), abbr=("RoPE",)),
        Term("MLA", "mla",
             "Multi-head latent attention (DeepSeek-V2 and V3): each token and layer caches one small latent "
             "vector, from which every head rebuilds its keys and values.",
             f"{LLM_ARCH}#multi-head-latent-attention",
             "DeepSeek-V3 caches {{ fact: llm_architecture.deepseek_v3_kv_vs_llama_8b }} of what Llama 3.1 8B "
             "caches per token.",
             forms=("MLA", "multi-head latent attention"), abbr=("MLA",)),
        Term("Decoupled RoPE key", "decoupled-rope-key",
             "In MLA, a small key that carries each token's position through RoPE apart from the latent, shared "
             "by all heads and cached beside it, because a rotated key could not be folded into the query the way "
             "the latent's up-projection is.",
             f"{LLM_ARCH}#multi-head-latent-attention",
             "DeepSeek-V3: {{ fact: llm_architecture.deepseek_v3_qk_rope_head_dim }} numbers beside a "
             "{{ fact: llm_architecture.deepseek_v3_kv_lora_rank }}-number latent, per token and layer "
             "(DeepSeek-V2 paper, [arXiv:2405.04434](https://arxiv.org/abs/2405.04434), section 2.1.3).",
             forms=("decoupled RoPE key", "shared RoPE key", "RoPE key")),
        Term("FlashAttention", "flashattention",
             "An exact attention kernel that never writes the score matrix to GPU memory: it streams tiles of keys "
             "and values through on-chip SRAM and computes the softmax online.",
             f"{ATT}#flashattention",
             "One head at {{ fact: attention.flash_example_seq_len }} tokens moves "
             "{{ fact: attention.flash_traffic_reduction }} times fewer bytes than standard attention."),
        Term("Online softmax", "online-softmax",
             "A softmax computed one tile at a time, keeping a running maximum and a running sum and rescaling "
             "the partial result whenever the maximum grows.",
             f"{ATT}#flashattention", forms=("online softmax",)),
        Term("Sliding window", "sliding-window",
             "Attention in which each token sees only the last w tokens, itself included, so that a windowed "
             "layer's KV cache stops growing at w tokens.",
             f"{ATT}#sliding-window-attention",
             "Mistral 7B v0.1 uses a window of {{ fact: attention.mistral_7b_window }} tokens.",
             forms=("sliding window", "sliding windows", "sliding-window")),
        Term("State-space model", "state-space-model",
             "A layer that replaces attention with a fixed-size state carried from token to token, so that a "
             "decode step costs the same at any context and nothing grows like a KV cache.",
             f"{ATT}#state-space-models-and-hybrids",
             forms=("state-space model", "state-space models", "state-space layer", "state-space layers", "SSM",
                    "SSMs")),
        Term("Mamba", "mamba",
             "A state-space layer whose update is selective: how much it stores and forgets is computed from each "
             "token.",
             f"{ATT}#state-space-models-and-hybrids", forms=("Mamba", "Mamba-2")),
        Term("Hybrid", "hybrid",
             "A model that keeps a few attention layers for exact lookups among many state-space layers that "
             "carry the rest at a fixed cost per token.",
             f"{ATT}#state-space-models-and-hybrids",
             "NVIDIA Nemotron 3 Nano: {{ fact: attention.nemotron_nano_attention_layers }} attention layers of "
             "{{ fact: attention.nemotron_nano_layers }}.",
             forms=("hybrid", "hybrids")),
    )),
    ("Mixture of experts", (
        Term("MoE", "moe",
             "Mixture of experts: each layer's feed-forward network is split into many experts, and a router sends "
             "each token to a few of them.",
             f"{LLM_ARCH}#224-mixture-of-experts",
             "Qwen3-235B-A22B uses about {{ fact: llm_architecture.qwen3_235b_active_params_rounded }}B of its "
             "{{ fact: llm_architecture.qwen3_235b_total_params_rounded }}B parameters per token. Not every layer "
             "need have experts: DeepSeek-V3 keeps its first {{ fact: glossary.deepseek_v3_dense_layers }} of "
             "{{ fact: llm_architecture.deepseek_v3_layers }} layers dense (`first_k_dense_replace`), and Llama 4 "
             "Maverick alternates dense and MoE layers (`interleave_moe_layer_step` in its "
             "[config](https://huggingface.co/meta-llama/Llama-4-Maverick-17B-128E-Instruct/blob/main/config.json)),"
             " while Llama 4 Scout has experts in every layer.",
             forms=("MoE", "MoEs", "mixture of experts", "mixture-of-experts", "mixtures of experts"), abbr=("MoE", "MoEs")),
        Term("Expert", "expert",
             "One of the many small feed-forward networks of an MoE layer; each token runs only a few of them.",
             f"{LLM_ARCH}#224-mixture-of-experts",
             "Qwen3-235B-A22B: {{ fact: llm_architecture.qwen3_235b_experts_per_token }} of "
             "{{ fact: llm_architecture.qwen3_235b_experts }} experts per token and layer.",
             forms=("expert", "experts")),
        Term("Router", "router",
             "The small linear layer of an MoE layer that scores every expert for each token; the token runs the "
             "best-scoring few.",
             f"{LLM_ARCH}#224-mixture-of-experts", forms=("router", "routers", "routing")),
        Term("Active parameters", "active-parameters",
             "The parameters one token actually uses: in an MoE, the shared parts and the experts it was routed to.",
             f"{LLM_ARCH}#224-mixture-of-experts",
             forms=("active parameters", "active parameter")),
        Term("Dense", "dense",
             "Using every weight for every token, as a model without a mixture of experts does; of a GPU's peak, "
             "without structured sparsity.",
             f"{LLM_ARCH}#224-mixture-of-experts", forms=("dense",), abbr=("dense",)),
        Term("Expert parallelism", "expert-parallelism",
             "Spreading an MoE's experts over several GPUs, each holding and reading its share and receiving the "
             "tokens routed to its experts.",
             f"{LLM_ARCH}#224-mixture-of-experts", forms=("expert parallelism",)),
    )),
    ("The GPU and its bottlenecks", (
        Term("H100", "h100",
             "NVIDIA's Hopper data-center GPU, the one the running example is served on.",
             f"{BOT}#241-opsbyte-and-arithmetic-intensity",
             "The SXM version: {{ fact: bottlenecks.h100_fp16_tflops }} dense FP16 TFLOP/s, "
             "{{ fact: bottlenecks.h100_bandwidth_tb_s }} TB/s of HBM bandwidth, "
             "{{ fact: attention.h100_memory_gb }} GB of HBM.",
             forms=("H100", "H100s")),
        Term("FLOP and FLOP/s", "flop",
             "A FLOP is one floating-point operation, a multiply or an add: FLOPs count work, while FLOP/s (and "
             "TFLOP/s, a trillion of them a second) measure a rate such as a GPU's peak.",
             f"{NN}#211-linear-layers-and-matmul",
             "Work divided by rate is time: an H100 peaks at {{ fact: bottlenecks.h100_fp16_tflops }} dense FP16 "
             "TFLOP/s.",
             forms=("FLOP", "FLOPs", "FLOP/s", "TFLOP/s"), abbr=("FLOP", "FLOPs", "FLOP/s", "TFLOP/s")),
        Term("Bandwidth", "bandwidth",
             "The bytes per second a memory delivers to the compute units; for a GPU, usually its HBM's.",
             f"{BOT}#24-calculating-inference-bottlenecks",
             "{{ fact: bottlenecks.h100_bandwidth_tb_s }} TB/s on an H100.",
             forms=("bandwidth", "memory bandwidth")),
        Term("Ops:byte", "ops-byte",
             "A GPU's peak FLOP/s divided by its memory bandwidth: how many operations it can do in the time it "
             "takes to move one byte.",
             f"{BOT}#241-opsbyte-and-arithmetic-intensity",
             "About {{ fact: bottlenecks.h100_ops_per_byte }} for an H100 in FP16.",
             forms=("ops:byte", "ops:byte ratio")),
        Term("Arithmetic intensity", "arithmetic-intensity",
             "An algorithm's operations divided by the bytes it must move: compared with the GPU's ops:byte, it "
             "says which of the two limits the work.",
             f"{BOT}#241-opsbyte-and-arithmetic-intensity",
             "A Llama 3.1 8B decode step does about {{ fact: bottlenecks.llama_8b_decode_intensity }} operation "
             "per byte; a long prompt's prefill {{ fact: bottlenecks.llama_8b_prefill_intensity }}.",
             forms=("arithmetic intensity", "arithmetic intensities")),
        Term("Memory bound", "memory-bound",
             "Limited by moving bytes: the work's arithmetic intensity is below the GPU's ops:byte, so the math "
             "units wait for data, as in decode.",
             f"{BOT}#241-opsbyte-and-arithmetic-intensity", forms=("memory bound", "memory-bound")),
        Term("Compute bound", "compute-bound",
             "Limited by arithmetic: the work's arithmetic intensity is above the GPU's ops:byte, so the math "
             "units run flat out, as in a long prefill or a denoiser pass.",
             f"{BOT}#241-opsbyte-and-arithmetic-intensity", forms=("compute bound", "compute-bound")),
        Term("Roofline", "roofline",
             "The chart of attainable FLOP/s against arithmetic intensity: a slanted line where bandwidth limits, "
             "a flat roof where compute does, meeting at the ops:byte ratio.",
             f"{BOT}#241-opsbyte-and-arithmetic-intensity", forms=("roofline", "rooflines")),
        Term("Bottleneck", "bottleneck",
             "The resource that sets a workload's time, compute or memory bandwidth, while the other idles.",
             f"{BOT}#24-calculating-inference-bottlenecks", forms=("bottleneck",)),
        Term("Tensor parallelism", "tensor-parallelism",
             "Splitting every weight matrix of a model over several GPUs: each does part of every layer, and the "
             "GPUs sum their partial results after each attention block and each MLP.",
             f"{BOT}#measured",
             "Llama 2 7B split over eight A100s sums its results {{ fact: bottlenecks.gpt_fast_7b_tp8_all_reduces }} "
             "times per token.",
             forms=("tensor parallelism", "tensor parallel", "tensor-parallel")),
        Term("All-reduce", "all-reduce",
             "A collective operation in which every GPU holds a buffer of the same shape and every GPU ends up with "
             "their sum; a ring does it in steps around the GPUs, each paying the link's latency.",
             f"{BOT}#measured",
             "At least {{ fact: bottlenecks.gpt_fast_7b_tp8_all_reduce_us }} for a decode step's hidden state on "
             "eight A100s.",
             forms=("all-reduce", "all-reduces")),
        Term("NVLink", "nvlink",
             "NVIDIA's link between GPUs, many times faster than PCIe; through NVSwitch chips it joins the GPUs of "
             "a board or a rack so that any two talk at its full rate.",
             f"{BOT}#measured",
             "{{ fact: bottlenecks.hgx_domain_gpus }} GPUs on an HGX board, {{ fact: bottlenecks.nvl72_domain_gpus }} "
             "in an NVL72 rack.",
             forms=("NVLink", "NVSwitch")),
        Term("HBM", "hbm",
             "High-bandwidth memory: the GPU's main memory, stacks of DRAM beside the chip, where the weights and "
             "the KV cache live.",
             f"{ATT}#the-gpus-memory-hierarchy",
             "{{ fact: attention.h100_memory_gb }} GB on an H100, at {{ fact: bottlenecks.h100_bandwidth_tb_s }} "
             "TB/s.",
             forms=("HBM", "HBM2e", "HBM3", "HBM3e"), abbr=("HBM",)),
        Term("SRAM", "sram",
             "Static RAM on the GPU chip itself (registers, shared memory, caches): small, and many times faster "
             "than HBM.",
             f"{ATT}#the-gpus-memory-hierarchy",
             "An H100 has up to {{ fact: attention.h100_shared_memory_per_sm }} of shared memory per SM, "
             "{{ fact: attention.h100_shared_memory_total }} in all.",
             abbr=("SRAM",)),
        Term("SM", "sm",
             "Streaming multiprocessor: one of a GPU's many independent processors, each with its own tensor "
             "cores, registers and shared memory.",
             f"{ATT}#the-gpus-memory-hierarchy",
             "{{ fact: attention.h100_sms }} on an H100 SXM.",
             forms=("SM", "SMs"), abbr=("SM", "SMs")),
        Term("Tensor core", "tensor-core",
             "A unit inside each SM that multiplies small matrix tiles in one instruction; a GPU's peak FLOP/s "
             "for matmuls come from them.",
             f"{ATT}#the-gpus-memory-hierarchy",
             forms=("tensor core", "tensor cores", "tensor-core"),
             abbr=("tensor core", "tensor cores", "Tensor core", "Tensor cores", "tensor-core")),
        Term("Kernel", "kernel",
             "A program that runs on the GPU, launched once per operation such as a matmul or an attention.",
             f"{ATT}#the-gpus-memory-hierarchy", forms=("kernel", "kernels")),
        Term("Tile", "tile",
             "A block of a matrix small enough to sit in one SM's shared memory; tiled kernels stream tiles "
             "through SRAM instead of whole matrices.",
             f"{ATT}#the-gpus-memory-hierarchy",
             "{{ fact: attention.tile_shape }} positions of FP16 queries, keys or values: "
             "{{ fact: attention.flash_tile_bytes }} each.",
             forms=("tile", "tiles", "tiled")),
    )),
    ("Number formats", (
        Term("FP32", "fp32",
             "32-bit floating point (single precision): {{ fact: glossary.fp32_bytes }} bytes per number.",
             f"{BOT}#byte-convention",
             "Training keeps master weights in it; inference rarely stores weights in it.", abbr=("FP32",)),
        Term("FP16", "fp16",
             "16-bit floating point (IEEE half precision, {{ fact: glossary.fp16_exponent_bits }} exponent and "
             "{{ fact: glossary.fp16_mantissa_bits }} mantissa bits): {{ fact: bottlenecks.fp16_bytes }} bytes per "
             "number.",
             f"{BOT}#byte-convention", "The 16-bit format of a GPU's usual peak FLOP/s.", abbr=("FP16",)),
        Term("BF16", "bf16",
             "bfloat16: 16-bit floating point with FP32's {{ fact: glossary.fp32_exponent_bits }} exponent bits "
             "and only {{ fact: glossary.bf16_mantissa_bits }} mantissa bits, as many bytes as FP16 with FP32's "
             "range and less precision.",
             f"{BOT}#byte-convention", "Most open LLM checkpoints are published in it.", abbr=("BF16",)),
        Term("FP8", "fp8",
             "8-bit floating point, one byte per number, in two variants: E4M3 (more precision) and E5M2 (more "
             "range).",
             f"{BOT}#241-opsbyte-and-arithmetic-intensity",
             "An H100 runs it at {{ fact: bottlenecks.h100_fp8_over_fp16_ops_per_byte }} times its 16-bit FLOP/s.",
             abbr=("FP8",)),
        Term("FP4", "fp4",
             "4-bit floating point (E2M1), half a byte per number, usable only with a shared scale per small "
             "block of numbers, as in MXFP4 and NVFP4.",
             f"{BOT}#241-opsbyte-and-arithmetic-intensity", abbr=("FP4",)),
    )),
    ("Image generation", (
        Term("Denoiser", "denoiser",
             "The large network of an image model that looks at a noisy latent and predicts which way to move it, "
             "once or twice per step.",
             f"{IMG}#23-image-generation-inference-mechanics",
             "Qwen-Image's has {{ fact: image_generation.qwen_image_denoiser_params_billions }}B parameters.",
             forms=("denoiser", "denoisers")),
        Term("Latent", "latent",
             "A compressed stand-in that a model works on instead of the raw data: an image model's small grid of "
             "numbers for the pixels, or MLA's small vector cached per token and layer.",
             f"{IMG}#231-architecture",
             "The VAEs here shrink each side of an image {{ fact: image_generation.vae_spatial_factors }} times.",
             forms=("latent", "latents")),
        Term("VAE", "vae",
             "Variational autoencoder: the network that compresses an image into a latent and, at the end of "
             "generation, decodes the latent back into pixels.",
             f"{IMG}#231-architecture", forms=("VAE", "VAEs"), abbr=("VAE", "VAEs")),
        Term("Text encoder", "text-encoder",
             "The network that turns the prompt into embeddings the denoiser attends to, run once per request.",
             f"{IMG}#23-image-generation-inference-mechanics", forms=("text encoder", "text encoders")),
        Term("Patch", "patch",
             "A small square of the latent that becomes one token of a diffusion transformer.",
             f"{IMG}#231-architecture",
             "{{ fact: image_generation.qwen_image_patch }} latent pixels in Qwen-Image.",
             forms=("patch", "patches")),
        Term("Guidance (CFG)", "guidance",
             "Classifier-free guidance: the denoiser runs twice per step, with the prompt and without it, and the "
             "result is pushed away from the unprompted prediction, which doubles the passes.",
             f"{IMG}#classifier-free-guidance",
             "Qwen-Image's {{ fact: image_generation.qwen_image_default_steps }} default steps, guided, are "
             "{{ fact: image_generation.qwen_image_default_passes }} passes.",
             forms=("classifier-free guidance", "CFG", "guidance", "guided"), abbr=("CFG",)),
        Term("Few-step model", "few-step",
             "An image model trained to reach in a few steps what its teacher reaches in dozens, usually with "
             "guidance folded into a single pass per step.",
             f"{IMG}#232-and-233-few-step-models-and-video",
             "The chapter puts them at {{ fact: image_generation.few_step_max_steps }} steps or fewer.",
             forms=("few-step", "few-step model", "few-step models")),
        Term("Distillation", "distillation",
             "Training a smaller or faster student model to reproduce what a teacher model does.",
             f"{IMG}#232-and-233-few-step-models-and-video",
             "Against {{ fact: image_generation.typical_steps_max }} guided steps, a few-step distilled model "
             "saves {{ fact: image_generation.few_step_distilled_saving }} of the denoiser passes.",
             forms=("distillation", "distilled")),
        Term("Autoregressive image model", "autoregressive-image-model",
             "An image model that writes an image as a sequence of image tokens, as an LLM writes text; to avoid "
             "one decode step per token, many predict a whole group of tokens per step.",
             f"{IMG}#231-architecture",
             "MaskGIT fills in a share of the still-masked tokens at each of a few steps "
             "([arXiv:2202.04200](https://arxiv.org/abs/2202.04200)); VAR predicts a whole resolution, coarse to "
             "fine, per step ([arXiv:2404.02905](https://arxiv.org/abs/2404.02905)).",
             forms=("autoregressive",)),
    )),
)

TERMS: tuple[Term, ...] = tuple(t for _, terms in GROUPS for t in terms)
