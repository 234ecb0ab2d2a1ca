// Progressive enhancement only: every page works without it.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  // The server form shows only the fields of the chosen transport.
  const radios = document.querySelectorAll('input[name="transport"]');
  const showTransport = () => {
    const chosen = document.querySelector('input[name="transport"]:checked');
    document.querySelectorAll("[data-transport]").forEach((el) => {
      el.hidden = chosen !== null && el.dataset.transport !== chosen.value;
    });
  };
  radios.forEach((radio) => radio.addEventListener("change", showTransport));
  if (radios.length) showTransport();

  // "No prefix" and a typed prefix exclude each other.
  const noPrefix = document.querySelector('input[name="no_prefix"]');
  const prefix = document.querySelector('input[name="tool_prefix"]');
  if (noPrefix && prefix) {
    const sync = () => {
      prefix.disabled = noPrefix.checked;
      if (noPrefix.checked) prefix.value = "";
    };
    noPrefix.addEventListener("change", sync);
    sync();
  }
});

// Copy buttons: each names the element whose text it copies. Hidden until this script runs.
document.addEventListener("DOMContentLoaded", () => {
  const copied = (button, label) => {
    const before = button.textContent;
    button.textContent = label;
    setTimeout(() => { button.textContent = before; }, 1500);
  };
  // navigator.clipboard exists only in secure contexts (https, localhost): elsewhere select the text instead.
  const selectText = (source) => {
    const range = document.createRange();
    range.selectNodeContents(source);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  };
  document.querySelectorAll("button[data-copy]").forEach((button) => {
    const source = document.getElementById(button.dataset.copy);
    if (!source) return;
    button.hidden = false;
    button.addEventListener("click", () => {
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(source.textContent).then(
          () => copied(button, "Copied"),
          () => { selectText(source); copied(button, "Selected: copy it"); },
        );
      } else {
        selectText(source);
        copied(button, "Selected: copy it");
      }
    });
  });
});
