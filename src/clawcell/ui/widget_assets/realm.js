// clawcell realm guard: the first script of every widget and MCP App document (`_realm.py`
// puts it there), before any of the app's own code.
//
// WebRTC sends UDP to any host and port, past every HTTP policy (CSP's `webrtc 'block'` is not
// enforced by Chromium). So every `RTC*` interface (and the webkit-prefixed ones) is deleted
// from this realm. The app cannot get them back from another realm: a child frame's
// `about:blank` has its own opaque origin (cross-origin, unreadable), `data:`/`blob:` frames are
// refused by `frame-src 'none'`, and the one frame kind that would run the app's own script
// in a fresh realm, `srcdoc`, cannot be made: the document requires Trusted Types and this
// script installs the only `default` policy, which refuses frame markup in every HTML sink
// (`innerHTML`, `document.write`…) and `srcdoc` setters; a child frame inherits the policy without the
// `default` policy, so a `javascript:` URL cannot run there either; a frame that the static
// markup holds is removed before the parser runs the next script.
//
// It also proves the user's gestures to the chat: a private MessageChannel port, offered once at
// the top of the document (the chat adopts only a frame's first offer), that says `gesture` on
// every trusted `pointerdown` and `keydown` in this document. Its listeners are the first on the
// window (capture phase), so app code can neither stop them nor forge the events (`isTrusted`).
(() => {
  "use strict";
  const channel = new MessageChannel();
  const port = channel.port1;
  const post = MessagePort.prototype.postMessage;
  const apply = Reflect.apply;
  window.parent.postMessage({ type: "clawcell:realm", version: 1 }, "*", [channel.port2]);
  const tell = (event) => {
    if (event.isTrusted && !event.repeat) apply(post, port, ["gesture"]);
  };
  window.addEventListener("pointerdown", tell, true);
  window.addEventListener("keydown", tell, true);
  const FRAME = /<\s*(iframe|frame|frameset|object|embed|portal|fencedframe)(?![\w-])/i;
  for (const name of Object.getOwnPropertyNames(window)) {
    if (/^(webkit)?RTC/.test(name)) delete window[name];
  }
  if (window.trustedTypes && window.trustedTypes.createPolicy) {
    window.trustedTypes.createPolicy("default", {
      createHTML: (html, sink) => {
        if (/srcdoc/i.test(String(sink)) || FRAME.test(html)) {
          throw new TypeError("frames are not allowed in this document");
        }
        return html;
      },
      createScript: (code) => code,
      createScriptURL: (url) => url,
    });
  }
  // `srcdoc` is not a Trusted Types sink (its document inherits the policy, not the realm):
  // setting it is refused here, and a frame made any other way is removed by the observer.
  const refuse = () => { throw new TypeError("frames are not allowed in this document"); };
  Object.defineProperty(HTMLIFrameElement.prototype, "srcdoc", { get: () => "", set: refuse });
  const setAttribute = Element.prototype.setAttribute;
  const setAttributeNS = Element.prototype.setAttributeNS;
  const isFrame = (element) => element instanceof HTMLIFrameElement;
  const named = (name) => /(^|:)srcdoc$/i.test(String(name));
  Element.prototype.setAttribute = function (name, value) {
    if (isFrame(this) && named(name)) refuse();
    return apply(setAttribute, this, [name, value]);
  };
  Element.prototype.setAttributeNS = function (ns, name, value) {
    if (isFrame(this) && named(name)) refuse();
    return apply(setAttributeNS, this, [ns, name, value]);
  };
  // Chromium opens a TCP connection to a frame's URL before `frame-src 'none'` refuses it, so
  // no script may make a frame element at all (markup is covered by the policy above, and the
  // canvas host renames the frames of the static markup).
  const createElement = Document.prototype.createElement;
  const createElementNS = Document.prototype.createElementNS;
  const FRAMES = /^(iframe|frame|frameset|object|embed|portal|fencedframe)$/i;
  Document.prototype.createElement = function (name, options) {
    if (FRAMES.test(String(name))) refuse();
    return apply(createElement, this, [name, options]);
  };
  Document.prototype.createElementNS = function (ns, name, options) {
    if (FRAMES.test(String(name).split(":").pop())) refuse();
    return apply(createElementNS, this, [ns, name, options]);
  };
  const remove = (node) => {
    if (node.nodeType !== 1) return;
    if (/^(IFRAME|FRAME|FRAMESET|OBJECT|EMBED|PORTAL|FENCEDFRAME)$/.test(node.nodeName)) node.remove();
    else for (const inner of node.querySelectorAll("iframe,frame,frameset,object,embed,portal,fencedframe")) inner.remove();
  };
  new MutationObserver((records) => {
    for (const record of records) for (const node of record.addedNodes) remove(node);
  }).observe(document, { childList: true, subtree: true });
})();
