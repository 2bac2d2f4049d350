// courier's page: the Copy button, and the paste area emptied once its
// answer is applied. Everything else is htmx, driven by the server.
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
  const id = e.detail.elt.id;
  if ((id === 'paste' || id === 'reviewed') && e.detail.xhr.status === 200) {
    document.getElementById('reply').value = '';
    document.getElementById('review').replaceChildren();
  }
});
