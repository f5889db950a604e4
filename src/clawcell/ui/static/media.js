// The image viewer: an image in the chat opens in a modal dialog with zoom and previous/next
// within its turn (the images between two of the user's messages); Escape closes it.
// It only shows images the page already shows: their `src` was checked by the server's media
// policy, and nothing here builds HTML (text goes in with textContent).

const transcript = document.getElementById("transcript");
let dialog = null;
let group = [];
let index = 0;

function button(label, text, action) {
  const element = document.createElement("button");
  element.type = "button";
  element.setAttribute("aria-label", label);
  element.textContent = text;
  element.dataset.action = action;
  return element;
}

function build() {
  dialog = document.createElement("dialog");
  dialog.className = "viewer";
  dialog.setAttribute("aria-label", "Image viewer");
  const bar = document.createElement("div");
  bar.className = "viewer-bar";
  const count = document.createElement("span");
  count.className = "viewer-count";
  bar.append(
    button("Previous image", "‹", "previous"),
    count,
    button("Next image", "›", "next"),
    button("Zoom", "Zoom", "zoom"),
    button("Close", "✕", "close"),
  );
  const frame = document.createElement("div");
  frame.className = "viewer-frame";
  const image = document.createElement("img");
  image.alt = "";
  frame.append(image);
  const caption = document.createElement("p");
  caption.className = "viewer-caption";
  dialog.append(bar, frame, caption);
  dialog.addEventListener("click", (event) => {
    const action = event.target.closest("[data-action]")?.dataset.action;
    if (action === "previous") show(index - 1);
    else if (action === "next") show(index + 1);
    else if (action === "zoom" || event.target === image) zoom();
    else if (action === "close" || event.target === dialog) dialog.close();
  });
  dialog.addEventListener("keydown", (event) => {
    if (event.key === "ArrowLeft") show(index - 1);
    else if (event.key === "ArrowRight") show(index + 1);
  });
  dialog.addEventListener("close", () => {
    dialog.classList.remove("zoomed");
    image.style.width = "";
  });
  document.body.append(dialog);
}

// Zoom: twice the size shown (at least the image's own size), scrolled inside the frame.
function zoom() {
  const image = dialog.querySelector(".viewer-frame img");
  const shown = image.getBoundingClientRect().width;
  const zoomed = dialog.classList.toggle("zoomed");
  image.style.width = zoomed ? `${Math.max(image.naturalWidth, shown * 2)}px` : "";
  dialog.querySelector("[data-action=zoom]").setAttribute("aria-pressed", String(zoomed));
}

function show(at) {
  if (at < 0 || at >= group.length) return;
  index = at;
  const source = group[at];
  const image = dialog.querySelector(".viewer-frame img");
  image.src = source.currentSrc || source.src;
  image.alt = source.alt;
  dialog.querySelector(".viewer-caption").textContent = source.alt;
  dialog.querySelector(".viewer-count").textContent = `${at + 1} / ${group.length}`;
  dialog.querySelector("[data-action=previous]").disabled = at === 0;
  dialog.querySelector("[data-action=next]").disabled = at === group.length - 1;
  dialog.classList.remove("zoomed");
  image.style.width = "";
}

// The images of the clicked one's turn: those after the last user message before it and
// before the next one.
function turnOf(image) {
  const images = [];
  for (const element of transcript.querySelectorAll(".message-user, .attachment-image img")) {
    if (element.classList.contains("message-user")) {
      if (images.includes(image)) break;
      images.length = 0;
    } else {
      images.push(element);
    }
  }
  return images;
}

transcript.addEventListener("click", (event) => {
  const opener = event.target.closest(".media-open");
  const image = opener?.querySelector("img");
  if (!image) return;
  if (!dialog) build();
  group = turnOf(image);
  dialog.showModal();
  show(group.indexOf(image));
});
