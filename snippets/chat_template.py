"""The exact string a chat model sees: messages rendered through a chat template.

Run: python snippets/chat_template.py
"""
from chapter2.chat import TEMPLATES, render_chat
from chapter2.tokenizer import tiny

messages = [
    {"role": "system", "content": "You are a concise assistant."},
    {"role": "user", "content": "What does the KV cache store?"},
]

for name in ("chatml", "llama3"):
    prompt = render_chat(messages, name, add_generation_prompt=True)
    eos = TEMPLATES[name].eos_token
    print(f"--- {name} (generation stops at {eos}); '\\n' marks each newline:")
    print(prompt.replace("\n", "\\n\n"))
    assert prompt.count(eos) == len(messages), "every turn ends with the end-of-turn token"
    assert "assistant" in prompt.rsplit(eos, 1)[1], "it ends opening the assistant's turn"

# Special tokens are single ids; the rest is ordinary BPE text.
tok = tiny()
prompt = render_chat(messages, "chatml")
ids = tok.encode(prompt)
print(f"chatml prompt: {len(ids)} tokens for the tiny model; the first ten:")
print([(tok.token_text(i), i) for i in ids[:10]])
assert tok.encode("<|im_start|>") == [ids[0]], "a special token is a single id"
assert tok.decode(ids) == prompt, "decoding the ids gives the prompt back exactly"
