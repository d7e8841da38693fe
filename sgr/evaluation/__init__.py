"""The evaluation harness: run a method over a dataset (:mod:`.runner`), score it (:mod:`.metrics`),
summarise its cost (:mod:`.cost`), write the report (:mod:`.report`) and compare runs (:mod:`.compare`)."""
