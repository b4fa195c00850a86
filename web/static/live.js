// Keeps a page current without reloading it: every element with data-live-url is replaced by
// what that URL serves (a fragment the server renders as the page does) every few seconds.
// Ticked checkboxes and the focused control survive the swap, and nothing is swapped while
// someone types in one of its forms. Without JavaScript the page
// falls back to its meta refresh.
(function () {
  "use strict";
  var period = 3000;
  var live = document.querySelectorAll("[data-live-url]");
  // The filters fold away on a phone; on a wide screen there is room to show them.
  if (window.matchMedia && window.matchMedia("(min-width: 701px)").matches) {
    document.querySelectorAll("details.filters").forEach(function (d) { d.open = true; });
  }
  if (!live.length || !window.fetch) {
    return;
  }
  function swap(el, html) {
    var ticked = {};
    el.querySelectorAll("input[type=checkbox]:checked").forEach(function (c) { ticked[c.value] = true; });
    var active = document.activeElement;
    var focus = active && el.contains(active) ? active.getAttribute("data-focus") : null;
    el.innerHTML = html;
    el.querySelectorAll("input[type=checkbox]").forEach(function (c) { c.checked = !!ticked[c.value]; });
    if (focus) {
      el.querySelectorAll("[data-focus]").forEach(function (c) {
        if (c.getAttribute("data-focus") === focus) { c.focus(); }
      });
    }
    if (window.flapjackLocalTimes) { window.flapjackLocalTimes(el); }
  }
  // busy: someone is typing or choosing in a form of el, whose swap would lose it; the next
  // poll tries again.
  function busy(el) {
    var active = document.activeElement;
    if (active && el.contains(active) && /^(INPUT|TEXTAREA|SELECT)$/.test(active.tagName) && active.type !== "checkbox") {
      return true;
    }
    var fields = el.querySelectorAll("input:not([type=checkbox]):not([type=hidden]), textarea");
    for (var i = 0; i < fields.length; i++) {
      if (fields[i].value !== fields[i].defaultValue) { return true; }
    }
    return false;
  }
  function poll(el) {
    if (document.hidden) { return; }
    var headers = {};
    var etag = el.getAttribute("data-live-etag");
    if (etag) { headers["If-None-Match"] = etag; }
    fetch(el.getAttribute("data-live-url"), { credentials: "same-origin", cache: "no-store", headers: headers })
      .then(function (res) {
        if (!res.ok) { return null; } // 304: unchanged
        return res.text().then(function (html) { return { html: html, etag: res.headers.get("ETag") || "" }; });
      })
      .then(function (got) {
        if (got === null || busy(el)) { return; }
        swap(el, got.html);
        el.setAttribute("data-live-etag", got.etag);
      })
      .catch(function () { /* offline for a moment: the next poll tries again */ });
  }
  live.forEach(function (el) { setInterval(function () { poll(el); }, period); });
})();
