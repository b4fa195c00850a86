// Fills the maintenance form's timezone offset so a typed date and time is read in the
// viewer's timezone; without JavaScript the server reads it as UTC.
document.querySelectorAll("input.tz-offset").forEach(function (el) {
  el.value = String(new Date().getTimezoneOffset());
});
