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
    print(f"--- {name} (generation stops at {TEMPLATES[name].eos_token}); '\\n' marks each newline:")
    print(prompt.replace("\n", "\\n\n"))

# Special tokens are single ids; the rest is ordinary BPE text.
tok = tiny()
ids = tok.encode(render_chat(messages, "chatml"))
print(f"chatml prompt: {len(ids)} tokens for the tiny model; the first ten:")
print([(tok.token_text(i), i) for i in ids[:10]])
