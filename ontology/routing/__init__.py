"""Pure ontology routing (no Django): pattern classifier, strategy matrix, filters,
retrieval strategies over an in-memory chunk corpus and the diagnostic CoT chain.

The Django layer (ontology.services / selectors) loads skills and indexed chunks from
the database into the plain records defined here and calls :func:`engine.route`.
"""
