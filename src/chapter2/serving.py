"""How servers keep the KV cache (chapter section 2.2, serving a request): four mechanisms, one formula each.

The roofline (`chapter2.roofline`) times one prefill and one decode step. A server running many requests
at once does four more things with the KV cache, and each changes a number the chapter gives:

1. **Paged blocks** (vLLM's PagedAttention, Kwon et al. 2023, arXiv:2309.06180). The cache lives in
   fixed-size blocks of `block_size` tokens, handed out as a sequence grows, so a sequence of n tokens
   holds ceil(n / B) blocks and wastes only the unused end of its last block,

       waste = ceil(n / B) x B - n  tokens  (B - 1 at most, (B - 1) / 2 on average),

   where an allocator that reserves each request's whole maximum length up front (prompt + max_tokens)
   wastes everything the request never writes. `paged_fit` counts the sequences that fit either way.
2. **Prefix caching** (SGLang's RadixAttention, Zheng et al. 2023, arXiv:2312.07104; vLLM's automatic
   prefix caching). Requests that start with the same tokens (a system prompt) share the blocks that hold
   them: a hit skips their prefill (`cached_prefill`: only the rest of the prompt is computed, attending
   over the cached part) and stores them once. vLLM shares whole blocks only, so S shared tokens share
   floor(S / B) x B of them (`shared_prefix_tokens`; SGLang's radix tree shares token by token, B = 1).
   `prefix_cache` weighs a hit and a miss by the hit rate.
3. **Chunked prefill** (Sarathi-Serve, Agrawal et al. 2024, arXiv:2403.02310). A long prompt is split into
   chunks of c tokens, and each chunk rides in a decode step of the sequences already generating
   (`mixed_step`): one pass reads the weights once for both. The running sequences then wait one mixed
   step per token instead of a whole prefill; the new prompt's time to first token grows, since its
   prefill is now ceil(P / c) passes, each reading the weights again (`chunked_prefill`).
4. **Speculative decoding** (Leviathan et al. 2023, arXiv:2211.17192). A cheap drafter proposes
   `draft_tokens` = gamma tokens, one pass of the target verifies them all, and the target keeps each
   drafted token with probability alpha (the acceptance rate) until the first rejection, then adds one of
   its own. With the acceptances independent, the expected tokens per step are

       E = (1 - alpha^(gamma + 1)) / (1 - alpha)   (gamma + 1 when alpha = 1),

   and a step costs one verification (`chapter2.roofline.decode` with `draft_tokens` and
   `accepted_tokens`) plus gamma drafter passes, each `drafter_cost` = c of a plain decode step
   (`speculative_decode`). Leviathan et al.'s improvement factor E / (gamma c + 1)
   (`leviathan_speedup`) is the same with verification as cheap as a plain step. EAGLE (Li et al. 2024,
   arXiv:2401.15077) and DeepSeek-V3's multi-token prediction (arXiv:2412.19437) draft with one extra
   layer on the target's own features (`draft_head_params`, `draft_head_cost`).

Times are the roofline's lower bounds (the module convention of `chapter2.roofline`); every estimate here is
built from its public `prefill` and `decode`. numpy only, for the browser.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ._checks import finite_real, positive_int
from . import roofline
from .models import ModelConfig, load_config

__all__ = [
    "VLLM_BLOCK_SIZE",
    "VLLM_MEMORY_UTILIZATION",
    "blocks",
    "last_block_waste",
    "mean_last_block_waste",
    "shared_prefix_tokens",
    "KVPool",
    "kv_pool",
    "PagedFit",
    "paged_fit",
    "cached_prefill",
    "PrefixCache",
    "prefix_cache",
    "mixed_step",
    "ChunkedPrefill",
    "chunked_prefill",
    "expected_tokens_per_step",
    "leviathan_speedup",
    "best_draft_tokens",
    "draft_head_params",
    "draft_head_cost",
    "SpeculativeDecode",
    "speculative_decode",
]

VLLM_BLOCK_SIZE = 16
"""vLLM's block size on CUDA GPUs when none is set, in tokens (vllm/platforms/cuda.py sets
`cache_config.block_size = 16`; the PagedAttention paper's default too, arXiv:2309.06180 section 7.2)."""

VLLM_MEMORY_UTILIZATION = 0.9
"""vLLM's default `gpu_memory_utilization`: the share of a GPU's memory it plans with (engine arguments)."""


def _model(model) -> ModelConfig:
    if isinstance(model, str):
        return load_config(model)
    if not isinstance(model, ModelConfig):
        raise TypeError(f"model must be a shipped config name or a chapter2.models.ModelConfig, got {type(model).__name__}")
    return model


# --------------------------------------------------------------------------- paged blocks


def blocks(tokens, block_size=VLLM_BLOCK_SIZE) -> int:
    """Blocks a sequence of `tokens` tokens holds: ceil(tokens / block_size) (0 for no tokens)."""
    tokens = positive_int("tokens", tokens, allow_zero=True)
    block_size = positive_int("block_size", block_size)
    return -(-tokens // block_size)


def last_block_waste(tokens, block_size=VLLM_BLOCK_SIZE) -> int:
    """Token slots left empty in a sequence's last block: ceil(n / B) x B - n, from 0 to B - 1."""
    return blocks(tokens, block_size) * block_size - positive_int("tokens", tokens, allow_zero=True)


def mean_last_block_waste(block_size=VLLM_BLOCK_SIZE) -> float:
    """The waste averaged over sequence lengths spread evenly modulo B: (0 + 1 + ... + (B - 1)) / B = (B - 1) / 2."""
    return (positive_int("block_size", block_size) - 1) / 2


def shared_prefix_tokens(prefix_tokens, block_size=VLLM_BLOCK_SIZE) -> int:
    """Tokens of a common prefix that requests can share: its whole blocks, floor(S / B) x B.

    vLLM's prefix cache finds a block by the hash of every token up to its end, so only full blocks are shared;
    the prefix's last, partly filled block is each sequence's own. SGLang's radix tree shares every token
    (block_size 1).
    """
    prefix_tokens = positive_int("prefix_tokens", prefix_tokens, allow_zero=True)
    return prefix_tokens // positive_int("block_size", block_size) * block_size


@dataclass(frozen=True)
class KVPool:
    """The memory a server keeps KV caches in (`kv_pool`).

    `free_bytes`: what is left for caches once the weights are loaded. `kv_bytes_per_token`: what one token
    adds to a sequence's cache, all cached layers. `fixed_bytes`: what every sequence holds whatever its
    length (a hybrid's recurrent state, an encoder-decoder's cross-attention cache), kept outside the blocks.
    """

    free_bytes: float
    kv_bytes_per_token: float
    fixed_bytes: float = 0.0

    def __post_init__(self):
        finite_real("free_bytes", self.free_bytes)
        finite_real("kv_bytes_per_token", self.kv_bytes_per_token, low=0, low_open=True)
        finite_real("fixed_bytes", self.fixed_bytes, low=0)


def kv_pool(model, *, gpu="H100-SXM", dtype="fp16", weight_dtype=None, kv_dtype=None, n_gpus=1,
            memory_utilization=VLLM_MEMORY_UTILIZATION) -> KVPool:
    """The KV pool of `model` served on `n_gpus` x `gpu`, the weights split over them (tensor parallel).

    free = memory_utilization x GPU memory x n_gpus - the weights as stored (`weight_dtype`): vLLM plans with
    `gpu_memory_utilization` of each GPU (0.9 by default) and gives what the weights leave to the cache
    (activations and CUDA graphs take a little more, left out). Per token: `kv_cache_bytes_per_token` in
    `kv_dtype`, every cached layer, as one block table for all layers holds it (a sliding-window layer's old
    blocks are kept; vLLM's hybrid allocator frees them, so it holds less).
    """
    m = _model(model)
    u = finite_real("memory_utilization", memory_utilization, low=0, low_open=True, high=1)
    est = roofline.prefill(m, 1, gpu=gpu, dtype=dtype, weight_dtype=weight_dtype, kv_dtype=kv_dtype, n_gpus=n_gpus)
    weights = est.memory_needed - est.kv_bytes  # the weights held, one copy split over the GPUs
    kv = est.kv_dtype
    fixed = float(m.state_bytes(kv) + m.cross_kv_bytes(kv))
    return KVPool(u * est.gpu.memory_bytes * est.n_gpus - weights, float(m.kv_cache_bytes_per_token(kv)), fixed)


@dataclass(frozen=True)
class PagedFit:
    """How many sequences of `tokens` tokens a KV pool holds, in blocks of `block_size` tokens (`paged_fit`).

    Four ways to count, from the worst to the best:

    - `sequences_reserved`: an allocator that reserves `reserved_tokens` (prompt + max_tokens) for every
      request in one contiguous piece, as servers did before PagedAttention;
    - `sequences_paged`: blocks, each sequence ceil(n / B) of them;
    - `sequences`: blocks, and a share `hit_rate` of the sequences share the whole blocks of a common
      `prefix_tokens`-token prefix, held once;
    - `sequences_exact`: every byte used, n tokens each (the limit no allocator passes without sharing).

    A sequence also holds the pool's `fixed_bytes`. Each count is floor(free bytes / bytes per sequence).
    """

    pool: KVPool
    tokens: int
    block_size: int
    reserved_tokens: int
    prefix_tokens: int = 0
    hit_rate: float = 0.0

    @property
    def block_bytes(self) -> float:
        return self.block_size * self.pool.kv_bytes_per_token

    @property
    def blocks_per_sequence(self) -> int:
        return blocks(self.tokens, self.block_size)

    @property
    def waste_tokens(self) -> int:
        return last_block_waste(self.tokens, self.block_size)

    @property
    def waste_share(self) -> float:
        """The empty slots' share of the sequence's blocks."""
        return self.waste_tokens / (self.blocks_per_sequence * self.block_size)

    @property
    def total_blocks(self) -> int:
        """Blocks of the pool: floor(free bytes / block bytes)."""
        return max(0, math.floor(self.pool.free_bytes / self.block_bytes))

    @property
    def shared_tokens(self) -> int:
        return shared_prefix_tokens(self.prefix_tokens, self.block_size)

    @property
    def shared_bytes(self) -> float:
        """The shared prefix's blocks, held once (none while no sequence hits it)."""
        return self.shared_tokens * self.pool.kv_bytes_per_token if self.hit_rate > 0 else 0.0

    @property
    def blocks_per_sequence_shared(self) -> float:
        """Blocks a sequence holds on average of its own: a hit holds ceil(n / B) less the shared blocks."""
        return self.blocks_per_sequence - self.hit_rate * self.shared_tokens / self.block_size

    def _fit(self, free: float, per_sequence: float) -> int:
        return max(0, math.floor(free / (per_sequence + self.pool.fixed_bytes)))

    @property
    def sequences_reserved(self) -> int:
        return self._fit(self.pool.free_bytes, self.reserved_tokens * self.pool.kv_bytes_per_token)

    @property
    def sequences_paged(self) -> int:
        return self._fit(self.pool.free_bytes, self.blocks_per_sequence * self.block_bytes)

    @property
    def sequences(self) -> int:
        return self._fit(self.pool.free_bytes - self.shared_bytes, self.blocks_per_sequence_shared * self.block_bytes)

    @property
    def sequences_exact(self) -> int:
        return self._fit(self.pool.free_bytes, self.tokens * self.pool.kv_bytes_per_token)


def paged_fit(pool: KVPool, tokens, *, block_size=VLLM_BLOCK_SIZE, reserved_tokens=None, prefix_tokens=0,
              hit_rate=0.0) -> PagedFit:
    """Sequences of `tokens` tokens (prompt + output) that fit in `pool`, counted four ways (`PagedFit`).

    `reserved_tokens`: what a contiguous allocator reserves per request (prompt + max_tokens, at least
    `tokens`; None: `tokens`). `prefix_tokens`: a prefix every request starts with (a system prompt), of which
    a share `hit_rate` of the running sequences share the whole blocks.
    """
    if not isinstance(pool, KVPool):
        raise TypeError(f"pool must be a KVPool (kv_pool), got {type(pool).__name__}")
    tokens = positive_int("tokens", tokens)
    block_size = positive_int("block_size", block_size)
    reserved = tokens if reserved_tokens is None else positive_int("reserved_tokens", reserved_tokens)
    if reserved < tokens:
        raise ValueError(f"reserved_tokens ({reserved}) must be at least tokens ({tokens}): a request cannot write "
                         "more than was reserved for it")
    prefix = positive_int("prefix_tokens", prefix_tokens, allow_zero=True)
    if prefix > tokens:
        raise ValueError(f"prefix_tokens ({prefix}) must be at most tokens ({tokens})")
    h = finite_real("hit_rate", hit_rate, low=0, high=1)
    return PagedFit(pool, tokens, block_size, reserved, prefix, h)


# --------------------------------------------------------------------------- prefix caching


def _setup(gpu, dtype, weight_dtype, kv_dtype, n_gpus) -> dict:
    return dict(gpu=gpu, dtype=dtype, weight_dtype=weight_dtype, kv_dtype=kv_dtype, n_gpus=n_gpus)


def _lm_head_flops(model: ModelConfig) -> float:
    """One position's logits: 2 x vocab x hidden FLOPs (0 for a model given `from_numbers`)."""
    return 2.0 * model.vocab_size * model.hidden_size


def cached_prefill(model, cached_tokens, new_tokens, *, batch=1, gpu="H100-SXM", dtype="fp16", weight_dtype=None,
                   kv_dtype=None, n_gpus=1) -> roofline.PhaseEstimate:
    """A prefill pass of `new_tokens` tokens after `cached_tokens` already in the KV cache, for `batch` sequences.

    What a prefix-cache hit runs (the cached prefix skipped), and what each chunk of a chunked prefill runs (the
    earlier chunks cached). Built from `roofline.prefill`, in its convention: the FLOPs are those of positions
    S + 1 .. S + U of a prompt of S + U tokens (each attends to all the keys before it, the cached ones too)
    with the last position's logits, prefill(S + U) - prefill(S) + one LM head; the weights are read once for
    the U new tokens, with their activations, as prefill(U) does; the KV cache of S + U tokens is moved once
    (the S cached read, the U new written, as `roofline.decode` counts a step's). `cached_tokens` 0 is
    `roofline.prefill` itself.
    """
    m = _model(model)
    S = positive_int("cached_tokens", cached_tokens, allow_zero=True)
    U = positive_int("new_tokens", new_tokens)
    setup = _setup(gpu, dtype, weight_dtype, kv_dtype, n_gpus)
    new = roofline.prefill(m, U, batch=batch, **setup)
    if S == 0:
        return new
    return _after(m, new, *(roofline.prefill(m, n, batch=batch, **setup) for n in (S + U, S)))


def _after(m: ModelConfig, new, whole, head) -> roofline.PhaseEstimate:
    """`new` (the prefill of U tokens) moved to follow S cached tokens, from the prefills of S + U and of S."""
    return replace(new, flops=whole.flops - head.flops + new.batch * _lm_head_flops(m),
                   attention_flops=whole.attention_flops - head.attention_flops, kv_bytes=whole.kv_bytes,
                   memory_needed=whole.memory_needed)


@dataclass(frozen=True)
class PrefixCache:
    """A request whose prompt starts with a shared prefix, with and without a prefix-cache hit (`prefix_cache`).

    `miss` is the whole prompt's prefill; `hit` skips the `cached_tokens` the cache holds (the prefix's whole
    blocks). `hit_rate`: the share of requests that find the prefix cached.
    """

    prompt_tokens: int
    prefix_tokens: int
    cached_tokens: int
    hit_rate: float
    miss: roofline.PhaseEstimate
    hit: roofline.PhaseEstimate

    @property
    def ttft(self) -> float:
        """Mean time to first token (the prefill's lower bound): hit_rate x hit + (1 - hit_rate) x miss."""
        return self.hit_rate * self.hit.time + (1 - self.hit_rate) * self.miss.time

    @property
    def flops_saved(self) -> float:
        """The share of the prefill FLOPs a request skips on average: hit_rate x (miss - hit) / miss."""
        return self.hit_rate * (self.miss.flops - self.hit.flops) / self.miss.flops

    @property
    def token_hit_rate(self) -> float:
        """SGLang's cache hit rate: cached prompt tokens over all prompt tokens, hit_rate x cached / prompt."""
        return self.hit_rate * self.cached_tokens / self.prompt_tokens


def prefix_cache(model, prompt_tokens, prefix_tokens, *, hit_rate=1.0, block_size=VLLM_BLOCK_SIZE, gpu="H100-SXM",
                 dtype="fp16", weight_dtype=None, kv_dtype=None, n_gpus=1) -> PrefixCache:
    """A `prompt_tokens`-token prompt whose first `prefix_tokens` are shared: its prefill on a miss and on a hit.

    A hit computes the prompt's last P - C tokens over C cached ones, C = `shared_prefix_tokens` (whole
    blocks; and at most P - 1: the last prompt token is always computed, since it gives the first output token).
    """
    m = _model(model)
    P = positive_int("prompt_tokens", prompt_tokens)
    S = positive_int("prefix_tokens", prefix_tokens, allow_zero=True)
    if S > P:
        raise ValueError(f"prefix_tokens ({S}) must be at most prompt_tokens ({P})")
    h = finite_real("hit_rate", hit_rate, low=0, high=1)
    C = min(shared_prefix_tokens(S, block_size), P - 1)
    setup = _setup(gpu, dtype, weight_dtype, kv_dtype, n_gpus)
    return PrefixCache(P, S, C, h, roofline.prefill(m, P, **setup), cached_prefill(m, C, P - C, **setup))


# --------------------------------------------------------------------------- chunked prefill


def mixed_step(model, chunk_tokens, cached_tokens=0, *, decode_batch=0, decode_context=1, gpu="H100-SXM",
               dtype="fp16", weight_dtype=None, kv_dtype=None, n_gpus=1) -> roofline.PhaseEstimate:
    """One pass that decodes `decode_batch` sequences and prefills a chunk of `chunk_tokens` of one prompt.

    Sarathi-Serve's stall-free batch: the chunk (`cached_prefill` of `chunk_tokens` after `cached_tokens`) and
    the decode step (`roofline.decode` of the batch at `decode_context`) share one read of the weights, the
    weights B + c tokens touch (`roofline.prefill` of B + c tokens: all of them for a dense model; a mixture's
    experts as B + c tokens pick them). FLOPs, KV and activation bytes add up. `emitted` counts the decode
    batch's tokens (the chunk's own first token comes with the prompt's last chunk: `ChunkedPrefill`).
    With `decode_batch` 0 it is the chunk alone.
    """
    m = _model(model)
    B = positive_int("decode_batch", decode_batch, allow_zero=True)
    setup = _setup(gpu, dtype, weight_dtype, kv_dtype, n_gpus)
    chunk = cached_prefill(m, cached_tokens, chunk_tokens, **setup)
    if B == 0:
        return chunk
    step = roofline.decode(m, decode_context, batch=B, **setup)
    return _mixed(chunk, step, roofline.prefill(m, B + chunk.tokens, **setup))


def _mixed(chunk, step, both) -> roofline.PhaseEstimate:
    """A chunk and a decode step in one pass; `both` is the prefill of B + c tokens (its weight bytes)."""
    return replace(both, phase="mixed", batch=step.batch + 1, tokens=step.batch + chunk.tokens,
                   flops=step.flops + chunk.flops, attention_flops=step.attention_flops + chunk.attention_flops,
                   kv_bytes=step.kv_bytes + chunk.kv_bytes, activation_bytes=step.activation_bytes + chunk.activation_bytes,
                   memory_needed=step.memory_needed + chunk.kv_bytes, emitted=step.emitted)


@dataclass(frozen=True)
class ChunkedPrefill:
    """A `prompt_tokens`-token prompt prefilled in chunks of `chunk_tokens`, riding in the decode steps of
    `decode_batch` running sequences (`chunked_prefill`).

    `steps` are the ceil(P / c) mixed passes; the prompt's first token is ready after the last (`ttft`), and
    each running sequence waits one step per token (`tpot`, the slowest step: the last chunk attends over the
    most). `decode_step` is a step of the running sequences alone (None without them), `alone` the prompt's
    prefill in one pass with nothing beside it.
    """

    prompt_tokens: int
    chunk_tokens: int
    decode_batch: int
    decode_context: int
    steps: tuple[roofline.PhaseEstimate, ...]
    decode_step: roofline.PhaseEstimate | None
    alone: roofline.PhaseEstimate

    @property
    def ttft(self) -> float:
        """Time to first token of the new prompt: its ceil(P / c) steps, one after another."""
        return sum(s.time for s in self.steps)

    @property
    def tpot(self) -> float:
        """The running sequences' time per output token while the prompt is prefilled: the slowest mixed step."""
        return max(s.time for s in self.steps)

    @property
    def tpot_decode(self) -> float | None:
        """Their time per output token with no prefill beside them (None without running sequences)."""
        return None if self.decode_step is None else self.decode_step.time


def chunked_prefill(model, prompt_tokens, chunk_tokens, *, decode_batch=0, decode_context=1, gpu="H100-SXM",
                    dtype="fp16", weight_dtype=None, kv_dtype=None, n_gpus=1) -> ChunkedPrefill:
    """Prefill a `prompt_tokens`-token prompt in chunks of `chunk_tokens` (the last one shorter) beside
    `decode_batch` sequences decoding at `decode_context` tokens each (held there: their growth by one token a
    step is left out).

    `chunk_tokens` >= the prompt is no chunking: one mixed step carries the whole prompt, and the running
    sequences wait for all of it (the generation stall Sarathi-Serve removes). `decode_batch` 0: the prompt
    alone, each chunk reading the weights again.
    """
    m = _model(model)
    P = positive_int("prompt_tokens", prompt_tokens)
    c = min(positive_int("chunk_tokens", chunk_tokens), P)
    B = positive_int("decode_batch", decode_batch, allow_zero=True)
    ctx = positive_int("decode_context", decode_context)
    setup = _setup(gpu, dtype, weight_dtype, kv_dtype, n_gpus)
    # every prefill estimate once: the prompt up to each chunk's end, each chunk size alone and beside the batch
    ends = list(range(c, P, c)) + [P]
    upto = {n: roofline.prefill(m, n, **setup) for n in ends}
    starts = [0] + ends[:-1]
    sizes = {end - start for start, end in zip(starts, ends, strict=True)}
    alone = {u: upto[u] if u in upto else roofline.prefill(m, u, **setup) for u in sizes}
    decode_step = roofline.decode(m, ctx, batch=B, **setup) if B else None
    beside = {u: roofline.prefill(m, B + u, **setup) for u in sizes} if B else {}
    steps = []
    for start, end in zip(starts, ends, strict=True):
        chunk = alone[end - start] if start == 0 else _after(m, alone[end - start], upto[end], upto[start])
        steps.append(_mixed(chunk, decode_step, beside[end - start]) if B else chunk)
    return ChunkedPrefill(P, c, B, ctx, tuple(steps), decode_step, upto[P])


# --------------------------------------------------------------------------- speculative decoding


def _acceptance(acceptance) -> float:
    return finite_real("acceptance", acceptance, low=0, high=1)


def expected_tokens_per_step(acceptance, draft_tokens) -> float:
    """Tokens a speculative step keeps on average: (1 - a^(g + 1)) / (1 - a), g + 1 when a = 1.

    Leviathan et al. 2023 (arXiv:2211.17192), equation 1: the target keeps drafted token i (i = 1 .. g) only if
    it kept tokens 1 .. i - 1 too, each with probability a (the acceptance rate, taken the same and independent
    for every token), and always adds one token of its own: 1 + a + a^2 + ... + a^g.
    """
    a = _acceptance(acceptance)
    g = positive_int("draft_tokens", draft_tokens, allow_zero=True)
    if a == 1.0:
        return float(g + 1)
    return (1.0 - a ** (g + 1)) / (1.0 - a)


def leviathan_speedup(acceptance, draft_tokens, drafter_cost) -> float:
    """Leviathan et al.'s expected improvement in walltime (arXiv:2211.17192, theorem 3.8): E / (g c + 1).

    A step drafts g tokens at c of a target step each (`drafter_cost`) and verifies them in one target step
    taken as long as a plain one; it yields E tokens (`expected_tokens_per_step`) where plain decoding yields 1.
    """
    c = finite_real("drafter_cost", drafter_cost, low=0)
    g = positive_int("draft_tokens", draft_tokens, allow_zero=True)
    return expected_tokens_per_step(acceptance, g) / (g * c + 1.0)


def best_draft_tokens(acceptance, drafter_cost, max_draft=16) -> int:
    """The draft length g in 0 .. `max_draft` with the largest `leviathan_speedup` (the smallest among ties)."""
    max_draft = positive_int("max_draft", max_draft)
    speedups = [leviathan_speedup(acceptance, g, drafter_cost) for g in range(max_draft + 1)]
    return int(max(range(max_draft + 1), key=lambda g: (speedups[g], -g)))


def draft_head_params(model) -> float:
    """Weights of an EAGLE-style draft head for `model`: one of its decoder layers plus a 2h x h fusion matrix.

    EAGLE (arXiv:2401.15077) drafts with one decoder layer fed the target's last hidden state and the next
    token's embedding, joined by a 2h -> h linear layer; it reuses the target's embedding and LM head. One
    layer here is the target's per-token weights less the LM head, over its layers (the mean layer: a model
    whose layers differ, dense ones before experts, gets their average). LLaMA2-Chat 70B: 855.6M + 134.2M =
    0.99B, the size EAGLE's README lists. DeepSeek-V3's multi-token prediction module is built the same way
    (one block, a 2h x h projection, the shared head).
    """
    m = _model(model)
    head = m.vocab_size * m.hidden_size
    layer = (m.params().matmul_active - head) / m.num_hidden_layers
    return float(layer + 2 * m.hidden_size ** 2)


def draft_head_cost(model) -> float:
    """Leviathan's c for a one-layer draft head: the weights it reads per drafted token (`draft_head_params` and
    the target's LM head) over the weights a target decode step reads per token (`params().matmul_active`).

    Decode is memory bound at small batches, so a pass's time follows the weights it reads. Llama 3.1 8B:
    (218.1M + 33.6M + 525.3M) / 7.50B = 0.104, the LM head of a 128k vocabulary the largest part.
    """
    m = _model(model)
    return (draft_head_params(m) + m.vocab_size * m.hidden_size) / m.params().matmul_active


@dataclass(frozen=True)
class SpeculativeDecode:
    """One speculative decoding step against a plain decode step (`speculative_decode`).

    `plain`: a decode step without drafts. `verify`: the target's pass over the new token and the g drafted
    ones (`roofline.decode` with `draft_tokens` and `accepted_tokens` = E). The drafter runs g passes before it,
    each `drafter_cost` of a plain step.
    """

    draft_tokens: int
    acceptance: float
    drafter_cost: float
    plain: roofline.PhaseEstimate
    verify: roofline.PhaseEstimate

    @property
    def tokens_per_step(self) -> float:
        return expected_tokens_per_step(self.acceptance, self.draft_tokens)

    @property
    def draft_time(self) -> float:
        return self.draft_tokens * self.drafter_cost * self.plain.time

    @property
    def step_time(self) -> float:
        return self.verify.time + self.draft_time

    @property
    def time_per_token(self) -> float:
        """Seconds per output token of one sequence: step time / E."""
        return self.step_time / self.tokens_per_step

    @property
    def tokens_per_s(self) -> float:
        """Output tokens per second across the batch."""
        return self.plain.batch * self.tokens_per_step / self.step_time

    @property
    def speedup(self) -> float:
        """Tokens per second against plain decoding: E x plain step / (verify + drafts)."""
        return self.tokens_per_step * self.plain.time / self.step_time


def speculative_decode(model, context, *, draft_tokens, acceptance, drafter_cost, batch=1, gpu="H100-SXM",
                       dtype="fp16", weight_dtype=None, kv_dtype=None, n_gpus=1) -> SpeculativeDecode:
    """Speculative decoding of `batch` sequences at `context` tokens: g = `draft_tokens` drafts a step, each kept
    with probability `acceptance`, drafted at `drafter_cost` (c) of a plain decode step each.

    The verification is `roofline.decode(..., draft_tokens=g, accepted_tokens=E)`: g + 1 positions a sequence,
    the KV cache read once. While decode is memory bound it costs about a plain step, and the speedup is
    Leviathan's E / (g c + 1); at a large batch the g + 1 positions' FLOPs make it compute bound and the
    speedup falls below that.
    """
    m = _model(model)
    g = positive_int("draft_tokens", draft_tokens, allow_zero=True)
    a = _acceptance(acceptance)
    c = finite_real("drafter_cost", drafter_cost, low=0)
    setup = _setup(gpu, dtype, weight_dtype, kv_dtype, n_gpus)
    plain = roofline.decode(m, context, batch=batch, **setup)
    verify = roofline.decode(m, context, batch=batch, draft_tokens=g,
                             accepted_tokens=expected_tokens_per_step(a, g) if g else None, **setup)
    return SpeculativeDecode(g, a, c, plain, verify)

