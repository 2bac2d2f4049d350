// courier's page: the Copy button, and a form emptied once what it sent
// is done (the paste area and Review with the answer they applied).
// Everything else is htmx, driven by the server.
document.addEventListener('click', async (e) => {
  const b = e.target.closest('button.copy');
  if (!b) return;
  try {
    await navigator.clipboard.writeText(document.getElementById(b.dataset.copy).textContent);
    b.textContent = 'Copied';
  } catch (err) {
    b.textContent = 'Copy failed: select the text by hand';
  }
});
document.addEventListener('htmx:afterRequest', (e) => {
  const form = e.detail.elt;
  if (form.tagName !== 'FORM' || e.detail.xhr.status !== 200) return;
  form.reset();
  if (form.id === 'paste' || form.id === 'reviewed') {
    document.getElementById('reply').value = '';
    document.getElementById('review').replaceChildren();
  }
});
