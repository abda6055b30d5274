"""The composition view of one RunFunction request, and what a composite composes from it.

What lives here:

* :mod:`.composition`: :class:`Composition`, what a composer receives and fills, put together
  from one class per concern, each typed against :mod:`.state` alone:
* :mod:`.state`: what a composition holds (the composite, environment, observed and desired
  resources, :class:`Notes`) and the observed reads every concern shares;
* :mod:`.names`: resource and external names, DNS labels, the rules for cloud-global names;
* :mod:`.status`: status memory, what the composite remembers between passes;
* :mod:`.waiting`: holds, what a resource waits for before it may be composed;
* :mod:`.emit`: emitting desired resources (names, tags, provider configs, import, form);
* :mod:`.namespaced`: the namespaced form a Crossplane v2 namespaced composite composes.

Who may import it: the composers, the cloud builders, the library, the rules and the engine (which
builds a :class:`Composition` per pass and finishes it). The package imports none of them: only
the observation, api and request packages and the shared vocabulary; its modules import each
other in one direction only (state, then the concerns, then the class).
"""

from fnplatform.composition.composition import Composition
from fnplatform.composition.state import (
    CLAIM_NAME,
    CLAIM_NAMESPACE,
    UID_SUFFIX_LENGTH,
    Emitted,
    Notes,
)

__all__ = ["CLAIM_NAME", "CLAIM_NAMESPACE", "UID_SUFFIX_LENGTH", "Composition", "Emitted", "Notes"]
