// Widgets, YouTube cards and MCP Apps in the chat (the host side; see `ui/_render/_surfaces.py`).
//
// Frames are drawn without `src` (`data-src`); this module sets it once its `message`
// listener is in place, so no offer is missed: a widget's bridge and every app document's
// realm guard (`widget_assets/realm.js`) offer their port once, at the top of the document, before
// app code runs, and the chat adopts only that first offer from a frame it drew.
//
// Apps act only when the user acts. A gesture is proven here, never by the app's say-so: the
// realm guard's port reports each trusted pointerdown/keydown in the frame, and this page's
// own `navigator.userActivation.isActive` must be true (a real gesture in a frame activates
// the page too; an app cannot fake either). Each gesture allows one prompt, one link and
// three tool calls within 5 s (`take`). Prompts are checked again here (text, length, no
// `/`, 10 a minute per document, on screen) and sent as the user's message through chat.js
// (`clawcell:prompt`); while a reply streams they wait in a visible queue under the app.
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

  // Gestures the realm guards reported, per frame: what each still allows.
  const GESTURE_MS = 5000;
  const ALLOWANCE = { prompt: 1, link: 1, call: 3 };
  const gestures = new WeakMap();
  const realms = new WeakSet();
  const take = (frame, kind) => {
    const gesture = gestures.get(frame);
    const active = navigator.userActivation ? navigator.userActivation.isActive : false;
    if (!gesture || !active || Date.now() - gesture.at > GESTURE_MS || !(gesture[kind] > 0)) {
      return false;
    }
    gesture[kind] -= 1;
    return true;
  };

  // Prompts an app sent while a reply streams: shown under the app, sent when the turn ends.
  const queued = [];
  const turnRunning = () => document.body.dataset.turn === "running";
  const flush = () => {
    while (queued.length && !turnRunning()) {
      const { text, note } = queued.shift();
      note.remove();
      document.dispatchEvent(new CustomEvent("clawcell:prompt", { detail: { text } }));
    }
  };
  new MutationObserver(flush).observe(document.body, { attributes: true, attributeFilter: ["data-turn"] });
  const enqueue = (frame, text) => {
    const box = frame.parentElement.querySelector(".widget-notices") || frame.parentElement;
    const note = document.createElement("p");
    note.className = "app-queued";
    note.setAttribute("role", "status");
    note.textContent = `Queued: “${text.slice(0, 120)}” is sent when the reply ends. `;
    const drop = document.createElement("button");
    drop.type = "button";
    drop.textContent = "Drop";
    const item = { text, note };
    drop.addEventListener("click", () => {
      const at = queued.indexOf(item);
      if (at >= 0) queued.splice(at, 1);
      note.remove();
    });
    note.append(drop);
    box.append(note);
    queued.push(item);
  };

  const prompt = (text, frame) => {
    if (typeof text !== "string") return false;
    const trimmed = text.trim();
    if (!trimmed || trimmed.length > 4000 || trimmed.startsWith("/")) return false;
    if (frame && turnRunning()) enqueue(frame, trimmed);
    else document.dispatchEvent(new CustomEvent("clawcell:prompt", { detail: { text: trimmed } }));
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
        // The gesture that made the prompt comes over another port, which may be read after
        // this message: look again once, shortly after, before dropping the prompt.
        const accept = () => {
          const now = Date.now();
          while (sent.length && now - sent[0] > 60000) sent.shift();
          if (sent.length >= 10 || !onScreen(frame) || !take(frame, "prompt")) return false;
          if (prompt(data.text, frame)) sent.push(now);
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
    if (data.type === "clawcell:realm" && event.ports.length === 1) {
      const frame = frameOf(event.source, "iframe.widget-frame, iframe.mcp-app-frame");
      if (!frame || realms.has(frame)) return;  // only the document's first offer
      realms.add(frame);
      event.ports[0].onmessage = (message) => {
        if (message.data === "gesture") gestures.set(frame, { at: Date.now(), ...ALLOWANCE });
      };
    } else if (data.type === "clawcell:widget" && event.ports.length === 1) {
      const frame = frameOf(event.source, "iframe.widget-frame");
      if (!frame || adopted.has(frame)) return;  // only the document's first offer
      adopted.add(frame);
      adoptWidget(frame, event.ports[0]);
    } else if (data.jsonrpc === "2.0") {
      const frame = frameOf(event.source, "iframe.mcp-app-frame");
      if (frame) receiveMcp(frame, data);
    }
  });
  window.clawcellSurfaces = { fit, notice, prompt, onScreen, tokens, take };

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
