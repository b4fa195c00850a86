// Fills the maintenance form's timezone offset so a typed date and time is read in the
// viewer's timezone; without JavaScript the server reads it as UTC.
document.querySelectorAll("input.tz-offset").forEach(function (el) {
  el.value = String(new Date().getTimezoneOffset());
});

// Shows times marked data-local (rendered in UTC) in the viewer's timezone, as text, so a phone
// needs no hover to read them. live.js calls it again after swapping a fragment in.
window.flapjackLocalTimes = function (root) {
  var fmt = { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short" };
  root.querySelectorAll("time[data-local]").forEach(function (el) {
    var d = new Date(el.getAttribute("datetime"));
    if (!isNaN(d.getTime())) {
      el.textContent = d.toLocaleString(undefined, fmt);
    }
  });
};
window.flapjackLocalTimes(document);
