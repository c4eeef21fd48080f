"""What the DRA-aware plugins share, private to this distribution: the CEL environment
(:mod:`.cel`), the structured-parameters allocator (:mod:`.allocator`) and the DRA-backed
extended resources (:mod:`.extended`).

Upstream keeps the first two in the ``k8s.io/dynamic-resource-allocation`` library, apart from
the DynamicResources plugin, so that NodeResourcesFit and BalancedAllocation use them without
importing that plugin; the layout here is the same.
"""
