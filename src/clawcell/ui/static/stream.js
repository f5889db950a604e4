// Reads a Server-Sent Events response of clawcell's UI and applies its page operations.
// Fragments are rendered (escaped and sanitized) by the server; this module only places them.

export function csrfToken() {
  return document.querySelector('meta[name="csrf-token"]').content;
}

export function applyOp(op) {
  const target = document.getElementById(op.target);
  if (!target) return;
  if (op.op === "text") {
    target.append(document.createTextNode(op.text));
  } else if (op.op === "append") {
    target.insertAdjacentHTML("beforeend", op.html);
  } else if (op.op === "replace") {
    target.insertAdjacentHTML("afterend", op.html);
    target.remove();
  }
}

function parseMessage(block) {
  let name = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("event: ")) name = line.slice(7);
    else if (line.startsWith("data: ")) data.push(line.slice(6));
  }
  return { name, data: data.length ? JSON.parse(data.join("\n")) : null };
}

// A refusal's message: the `error` of a JSON body, else the body's text.
async function refusal(response) {
  const text = await response.text();
  try {
    return JSON.parse(text).error ?? text;
  } catch {
    return text;
  }
}

// POST `body` as JSON to `url` and apply each streamed message; `onMessage` sees them too.
export async function postStream(url, body, onMessage) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrfToken() },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${response.status}: ${await refusal(response)}`);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const message = parseMessage(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
      for (const op of message.data?.ops ?? []) applyOp(op);
      onMessage?.(message);
    }
  }
}
