// Widgets, YouTube cards and MCP Apps in the chat (the host side; see `_surfaces.py`).
//
// Frames are drawn without `src` (`data-src`); this module sets it once its `message`
// listener is in place, so no offer is missed: a widget's bridge offers its port once, at the
// top of its document, before widget code runs, and the chat adopts only that first offer
// from a frame it drew. Prompts from a
// widget are checked again here (text, length, no `/`, 10 a minute per document, the frame
// focused and on screen) and sent as the user's message through chat.js (`clawcell:prompt`).
import { receive as receiveMcp } from "./mcp-apps.js";

{
  const MIN_HEIGHT = 48;
  const MAX_HEIGHT = 8000;
  const adopted = new WeakSet();
  const MAX_NOTICES = 3;
  const FOCUS_GRACE_MS = 200;  // how long a prompt waits for its frame's focus to arrive

  const frameOf = (source, selector) => {
    for (const frame of document.querySelectorAll(selector)) {
      if (frame.contentWindow === source) return frame;
    }
    return null;
  };

  const fit = (frame, height) => {
    if (typeof height !== "number" || !Number.isFinite(height)) return;
    frame.style.height = `${Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, Math.ceil(height)))}px`;
  };

  const notice = (frame, text) => {
    const box = frame.parentElement.querySelector(".widget-notices");
    if (!box || box.childElementCount >= MAX_NOTICES) return;
    const p = document.createElement("p");
    p.className = "widget-error";
    p.textContent = `⚠ ${String(text).slice(0, 600)}`;
    box.append(p);
  };

  const onScreen = (frame) => {
    const box = frame.getBoundingClientRect();
    return box.width > 0 && box.height > 0 && box.bottom > 0 && box.top < innerHeight;
  };

  // Design tokens for widgets, from the chat's own theme variables.
  const tokens = () => {
    const css = getComputedStyle(document.documentElement);
    const v = (name) => css.getPropertyValue(name).trim();
    return {
      "--text": v("--ink"), "--muted": v("--muted"), "--border": v("--line"),
      "--card": v("--panel"), "--elevated": v("--code"), "--accent": v("--accent"),
      "--ok": v("--ok"), "--warn": v("--warn"), "--danger": v("--bad"),
    };
  };
  const themed = new Set();
  matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => {
    for (const port of themed) port.postMessage({ type: "theme", tokens: tokens() });
  });

  const prompt = (text) => {
    if (typeof text !== "string") return false;
    const trimmed = text.trim();
    if (!trimmed || trimmed.length > 4000 || trimmed.startsWith("/")) return false;
    document.dispatchEvent(new CustomEvent("clawcell:prompt", { detail: { text: trimmed } }));
    return true;
  };

  const adoptWidget = (frame, port) => {
    const sent = [];
    port.onmessage = (event) => {
      const data = event.data || {};
      if (data.type === "size") fit(frame, data.height);
      else if (data.type === "error") {
        const where = data.line ? ` (${data.source || "widget"}:${data.line})` : "";
        notice(frame, `Widget error: ${String(data.message).slice(0, 500)}${where}`);
      } else if (data.type === "prompt") {
        // The click that made the prompt also focuses the frame, but that focus can reach
        // this document after the port's message (a frame on another site is another
        // process): look again once, shortly after, before dropping the prompt.
        const accept = () => {
          const now = Date.now();
          while (sent.length && now - sent[0] > 60000) sent.shift();
          if (sent.length >= 10 || document.activeElement !== frame || !onScreen(frame)) {
            return false;
          }
          if (prompt(data.text)) sent.push(now);
          return true;
        };
        if (!accept()) setTimeout(accept, FOCUS_GRACE_MS);
      }
    };
    port.postMessage({ type: "theme", tokens: tokens() });
    themed.add(port);
  };

  window.addEventListener("message", (event) => {
    const data = event.data;
    if (!data || typeof data !== "object") return;
    if (data.type === "clawcell:widget" && event.ports.length === 1) {
      const frame = frameOf(event.source, "iframe.widget-frame");
      if (!frame || adopted.has(frame)) return;  // only the document's first offer
      adopted.add(frame);
      adoptWidget(frame, event.ports[0]);
    } else if (data.jsonrpc === "2.0") {
      const frame = frameOf(event.source, "iframe.mcp-app-frame");
      if (frame) receiveMcp(frame, data);
    }
  });
  window.clawcellSurfaces = { fit, notice, prompt, onScreen, tokens };

  // Load frames only now that the listener above exists (also those a turn streams in).
  const load = (root) => {
    for (const frame of root.querySelectorAll("iframe[data-src]:not([src])")) {
      frame.src = frame.dataset.src;
    }
    for (const img of root.querySelectorAll(".youtube-stage img:not([hidden])")) {
      if (img.complete && img.naturalWidth === 0) img.hidden = true;  // failed before we ran
    }
  };
  load(document);
  new MutationObserver(() => load(document)).observe(document.body, { childList: true, subtree: true });

  // A thumbnail that cannot load (offline, blocked) leaves the dark stage and Play.
  document.addEventListener("error", (event) => {
    if (event.target instanceof HTMLImageElement && event.target.closest(".youtube-stage")) {
      event.target.hidden = true;
    }
  }, true);

  // YouTube: only Play frames the player (from youtube-nocookie.com, origin-only referrer).
  document.addEventListener("click", (event) => {
    const button = event.target instanceof Element ? event.target.closest("button.youtube-play") : null;
    if (!button) return;
    const stage = button.closest(".youtube-stage");
    const player = stage?.dataset.player || "";
    if (!player.startsWith("https://www.youtube-nocookie.com/embed/")) return;
    const frame = document.createElement("iframe");
    frame.src = player;
    frame.title = stage.dataset.title || "YouTube video";
    frame.referrerPolicy = "strict-origin";
    frame.allow = "autoplay; encrypted-media; picture-in-picture; fullscreen";
    frame.allowFullscreen = true;
    frame.className = "youtube-player";
    stage.replaceChildren(frame);
  });
}
